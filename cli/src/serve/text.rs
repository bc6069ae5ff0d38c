//! Text in and out: the model's tokenizer (`tokenizer.json`, Hugging Face's format),
//! its chat template (Jinja, rendered with minijinja as transformers renders it), and
//! the incremental text of a stream of tokens.

use std::path::Path;

use serde_json::Value;
use tokenizers::Tokenizer;

pub struct Text {
    tokenizer: Option<Tokenizer>,
    chat_template: Option<String>,
    bos_token: String,
    eos_token: String,
}

/// A special token's text in tokenizer_config.json: a string or `{"content": ...}`.
fn token_text(config: &Value, key: &str) -> String {
    match &config[key] {
        Value::String(s) => s.clone(),
        Value::Object(o) => o
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        _ => String::new(),
    }
}

impl Text {
    /// What `dir` has: `tokenizer.json` (else only token ids are served),
    /// `chat_template.jinja` or tokenizer_config.json's `chat_template` (else no chat).
    pub fn load(dir: &Path) -> Result<Text, String> {
        let tok_path = dir.join("tokenizer.json");
        let tokenizer = if tok_path.is_file() {
            Some(
                Tokenizer::from_file(&tok_path)
                    .map_err(|e| format!("{}: {e}", tok_path.display()))?,
            )
        } else {
            None
        };
        let config: Value = match std::fs::read_to_string(dir.join("tokenizer_config.json")) {
            Ok(t) => serde_json::from_str(&t).map_err(|e| format!("tokenizer_config.json: {e}"))?,
            Err(_) => Value::Null,
        };
        let chat_template = match std::fs::read_to_string(dir.join("chat_template.jinja")) {
            Ok(t) => Some(t),
            Err(_) => match &config["chat_template"] {
                Value::String(s) => Some(s.clone()),
                // A list of named templates: the default one.
                Value::Array(list) => list
                    .iter()
                    .find(|t| t["name"] == "default")
                    .or(list.first())
                    .and_then(|t| t["template"].as_str())
                    .map(str::to_string),
                _ => None,
            },
        };
        Ok(Text {
            tokenizer,
            chat_template,
            bos_token: token_text(&config, "bos_token"),
            eos_token: token_text(&config, "eos_token"),
        })
    }

    pub fn has_tokenizer(&self) -> bool {
        self.tokenizer.is_some()
    }

    /// Token ids of `text`; `special` adds the tokenizer's own (a leading `<s>`), as
    /// `tokenizer(text)` does (a chat template's text names them itself).
    pub fn encode(&self, text: &str, special: bool) -> Result<Vec<i64>, String> {
        let tok = self
            .tokenizer
            .as_ref()
            .ok_or("this model was served without tokenizer.json: send `prompt` as token ids")?;
        let enc = tok
            .encode(text, special)
            .map_err(|e| format!("tokenizing the prompt: {e}"))?;
        Ok(enc.get_ids().iter().map(|&i| i as i64).collect())
    }

    /// The text of `ids`, special tokens left out (as servers answer).
    pub fn decode(&self, ids: &[i64]) -> String {
        let Some(tok) = &self.tokenizer else {
            return String::new();
        };
        let ids: Vec<u32> = ids.iter().map(|&i| i as u32).collect();
        tok.decode(&ids, true).unwrap_or_default()
    }

    /// The prompt text of a conversation: the chat template rendered with the
    /// messages and `add_generation_prompt`.
    pub fn chat_prompt(&self, messages: &Value) -> Result<String, String> {
        let source = self
            .chat_template
            .as_ref()
            .ok_or("this model has no chat template (chat_template.jinja or tokenizer_config.json): use /v1/completions")?;
        let mut env = minijinja::Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function(
            "raise_exception",
            |message: String| -> Result<String, minijinja::Error> {
                Err(minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    message,
                ))
            },
        );
        env.add_template("chat", source)
            .map_err(|e| format!("the chat template does not parse: {e}"))?;
        let template = env.get_template("chat").map_err(|e| e.to_string())?;
        template
            .render(minijinja::context! {
                messages => minijinja::Value::from_serialize(messages),
                bos_token => self.bos_token.clone(),
                eos_token => self.eos_token.clone(),
                add_generation_prompt => true,
            })
            .map_err(|e| format!("the chat template refused the messages: {e}"))
    }
}

/// The text of a growing list of tokens, handed out in pieces that never split a
/// character (a token that ends inside a UTF-8 sequence waits for the next), and held
/// back where it could be the start of a stop string.
pub struct Incremental {
    ids: Vec<i64>,
    /// Bytes of the decoded text already handed out.
    sent: usize,
    stops: Vec<String>,
}

impl Incremental {
    pub fn new(stops: Vec<String>) -> Incremental {
        Incremental {
            ids: Vec::new(),
            sent: 0,
            stops,
        }
    }

    /// Adds a token: the new text to hand out, and whether a stop string was reached
    /// (the text is then cut before it, and the sequence ends).
    pub fn push(&mut self, text: &Text, id: i64) -> (String, bool) {
        self.ids.push(id);
        let full = text.decode(&self.ids);
        if let Some(cut) = self
            .stops
            .iter()
            .filter_map(|s| full.find(s.as_str()))
            .min()
        {
            let piece = full.get(self.sent..cut).unwrap_or("").to_string();
            self.sent = cut.max(self.sent);
            return (piece, true);
        }
        if full.ends_with('\u{FFFD}') {
            return (String::new(), false);
        }
        // Hold back the longest tail that begins a stop string.
        let mut end = full.len();
        for s in &self.stops {
            for k in (1..s.len()).rev() {
                if s.is_char_boundary(k) && full.ends_with(&s[..k]) {
                    end = end.min(full.len() - k);
                    break;
                }
            }
        }
        let piece = full.get(self.sent..end).unwrap_or("").to_string();
        self.sent = end.max(self.sent);
        (piece, false)
    }

    /// What was held back, at the end of the sequence.
    pub fn finish(&mut self, text: &Text) -> String {
        let full = text.decode(&self.ids);
        let piece = full.get(self.sent..).unwrap_or("").to_string();
        self.sent = full.len();
        piece
    }

    pub fn tokens(&self) -> usize {
        self.ids.len()
    }
}

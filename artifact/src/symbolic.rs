//! Symbolic sizes: the integer expressions torch.export writes for dynamic dimensions
//! (`Symbol('s77', positive=True, integer=True)`, `Mul(Integer(4), Symbol('s72'))`),
//! their ranges, and the binding of symbols to the sizes of a call's inputs.
//!
//! One home for the compiler (which specializes a program for concrete sizes) and the
//! runtime (which reads the sizes of a call's inputs and picks the specialization).
//! Expressions are read in sympy's `srepr` form, the one torch.export serializes, and
//! written back in that form (without the symbols' assumptions) into the manifest.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Concrete values of symbols, by name (`s77 = 8`).
pub type Bindings = BTreeMap<String, i64>;

/// An integer (or boolean) expression over symbols.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    Int(i64),
    Bool(bool),
    Sym(String),
    Add(Vec<Expr>),
    Mul(Vec<Expr>),
    /// Python's `//`: rounds toward negative infinity.
    FloorDiv(Box<Expr>, Box<Expr>),
    /// Python's `%`: the result has the divisor's sign.
    Mod(Box<Expr>, Box<Expr>),
    /// `ceil(a / b)`.
    CeilDiv(Box<Expr>, Box<Expr>),
    /// `(a // b) % c` (torch's `ModularIndexing`).
    ModularIndexing(Box<Expr>, Box<Expr>, Box<Expr>),
    Pow(Box<Expr>, Box<Expr>),
    Max(Vec<Expr>),
    Min(Vec<Expr>),
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
    fn sympy(self) -> &'static str {
        match self {
            CmpOp::Eq => "Eq",
            CmpOp::Ne => "Ne",
            CmpOp::Lt => "StrictLessThan",
            CmpOp::Le => "LessThan",
            CmpOp::Gt => "StrictGreaterThan",
            CmpOp::Ge => "GreaterThan",
        }
    }
}

/// Why an expression could not be read or evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError(pub String);

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExprError {}

fn err<T>(message: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError(message.into()))
}

// ---------------------------------------------------------------------------
// Reading sympy's srepr form.

#[derive(Clone, Debug, PartialEq)]
enum Token<'a> {
    Ident(&'a str),
    Int(i64),
    Str(&'a str),
    Open,
    Close,
    Comma,
    Equals,
}

fn tokenize(text: &str) -> Result<Vec<Token<'_>>, ExprError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b' ' | b'\t' | b'\n' => i += 1,
            b'(' => {
                tokens.push(Token::Open);
                i += 1
            }
            b')' => {
                tokens.push(Token::Close);
                i += 1
            }
            b',' => {
                tokens.push(Token::Comma);
                i += 1
            }
            b'=' => {
                tokens.push(Token::Equals);
                i += 1
            }
            b'\'' | b'"' => {
                let end = text[i + 1..]
                    .find(c as char)
                    .ok_or_else(|| ExprError(format!("unterminated string in `{text}`")))?;
                tokens.push(Token::Str(&text[i + 1..i + 1 + end]));
                i += end + 2;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let n = text[start..i]
                    .parse::<i64>()
                    .map_err(|_| ExprError(format!("bad integer `{}`", &text[start..i])))?;
                tokens.push(Token::Int(n));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                tokens.push(Token::Ident(&text[start..i]));
            }
            _ => return err(format!("unexpected `{}` in `{text}`", c as char)),
        }
    }
    Ok(tokens)
}

/// A parsed call argument: a value, a string, or a keyword argument (ignored).
enum Param {
    Expr(Expr),
    Str(String),
    Keyword,
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
    text: &'a str,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Token<'a>> {
        self.tokens.get(self.pos)
    }
    fn next(&mut self) -> Option<Token<'a>> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn expect(&mut self, want: Token<'a>) -> Result<(), ExprError> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            other => err(format!(
                "expected {want:?}, found {other:?} in `{}`",
                self.text
            )),
        }
    }

    fn params(&mut self) -> Result<Vec<Param>, ExprError> {
        self.expect(Token::Open)?;
        let mut out = Vec::new();
        if self.peek() == Some(&Token::Close) {
            self.pos += 1;
            return Ok(out);
        }
        loop {
            let is_keyword = matches!(self.peek(), Some(Token::Ident(_)))
                && self.tokens.get(self.pos + 1) == Some(&Token::Equals);
            if is_keyword {
                self.pos += 2;
                self.expr()?;
                out.push(Param::Keyword);
            } else if let Some(Token::Str(s)) = self.peek() {
                out.push(Param::Str(s.to_string()));
                self.pos += 1;
            } else {
                out.push(Param::Expr(self.expr()?));
            }
            match self.next() {
                Some(Token::Comma) => continue,
                Some(Token::Close) => return Ok(out),
                other => {
                    return err(format!(
                        "expected `,` or `)`, found {other:?} in `{}`",
                        self.text
                    ))
                }
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, ExprError> {
        match self.next() {
            Some(Token::Int(n)) => Ok(Expr::Int(n)),
            Some(Token::Ident(name)) => self.call(name),
            other => err(format!(
                "expected an expression, found {other:?} in `{}`",
                self.text
            )),
        }
    }

    fn call(&mut self, name: &str) -> Result<Expr, ExprError> {
        match name {
            "true" | "True" => return Ok(Expr::Bool(true)),
            "false" | "False" => return Ok(Expr::Bool(false)),
            _ => {}
        }
        // A bare name (`s0`, as sympy's str() writes a symbol) is that symbol.
        if self.peek() != Some(&Token::Open) {
            return Ok(Expr::Sym(name.to_string()));
        }
        let params = self.params()?;
        let text = self.text;
        let mut exprs = Vec::new();
        let mut strings = Vec::new();
        for p in params {
            match p {
                Param::Expr(e) => exprs.push(e),
                Param::Str(s) => strings.push(s),
                Param::Keyword => {}
            }
        }
        let n = exprs.len();
        let two = |exprs: Vec<Expr>| -> Result<(Box<Expr>, Box<Expr>), ExprError> {
            let mut it = exprs.into_iter();
            match (it.next(), it.next(), it.next()) {
                (Some(a), Some(b), None) => Ok((Box::new(a), Box::new(b))),
                _ => err(format!("`{name}` takes two arguments, has {n} in `{text}`")),
            }
        };
        Ok(match name {
            "Symbol" => match strings.as_slice() {
                [s] => Expr::Sym(s.clone()),
                _ => return err(format!("`Symbol` without one name in `{text}`")),
            },
            "Integer" => match exprs.as_slice() {
                [Expr::Int(v)] => Expr::Int(*v),
                _ => return err(format!("`Integer` without one integer in `{text}`")),
            },
            "One" => Expr::Int(1),
            "Zero" => Expr::Int(0),
            "NegativeOne" => Expr::Int(-1),
            "BooleanTrue" => Expr::Bool(true),
            "BooleanFalse" => Expr::Bool(false),
            "Add" => Expr::Add(exprs),
            "Mul" => Expr::Mul(exprs),
            "Max" => Expr::Max(exprs),
            "Min" => Expr::Min(exprs),
            "And" => Expr::And(exprs),
            "Or" => Expr::Or(exprs),
            "Not" => match exprs.pop_single() {
                Some(e) => Expr::Not(Box::new(e)),
                None => return err(format!("`Not` takes one argument in `{text}`")),
            },
            "FloorDiv" => {
                let (a, b) = two(exprs)?;
                Expr::FloorDiv(a, b)
            }
            "Mod" | "PythonMod" => {
                let (a, b) = two(exprs)?;
                Expr::Mod(a, b)
            }
            "CeilDiv" => {
                let (a, b) = two(exprs)?;
                Expr::CeilDiv(a, b)
            }
            "Pow" | "PowByNatural" => {
                let (a, b) = two(exprs)?;
                Expr::Pow(a, b)
            }
            "ModularIndexing" => {
                let mut it = exprs.into_iter();
                match (it.next(), it.next(), it.next(), it.next()) {
                    (Some(a), Some(b), Some(c), None) => {
                        Expr::ModularIndexing(Box::new(a), Box::new(b), Box::new(c))
                    }
                    _ => {
                        return err(format!(
                            "`ModularIndexing` takes three arguments in `{text}`"
                        ))
                    }
                }
            }
            "Eq" | "Ne" | "StrictLessThan" | "LessThan" | "StrictGreaterThan" | "GreaterThan"
            | "Lt" | "Le" | "Gt" | "Ge" => {
                let op = match name {
                    "Eq" => CmpOp::Eq,
                    "Ne" => CmpOp::Ne,
                    "StrictLessThan" | "Lt" => CmpOp::Lt,
                    "LessThan" | "Le" => CmpOp::Le,
                    "StrictGreaterThan" | "Gt" => CmpOp::Gt,
                    _ => CmpOp::Ge,
                };
                let (a, b) = two(exprs)?;
                Expr::Cmp(op, a, b)
            }
            other => {
                return err(format!(
                    "`{other}` in `{text}` is not a size function tpuc evaluates (it takes \
                     Symbol, Integer, Add, Mul, FloorDiv, Mod, CeilDiv, ModularIndexing, Pow, \
                     Max, Min, comparisons, And, Or, Not)"
                ))
            }
        })
    }
}

trait PopSingle {
    fn pop_single(self) -> Option<Expr>;
}

impl PopSingle for Vec<Expr> {
    fn pop_single(mut self) -> Option<Expr> {
        (self.len() == 1).then(|| self.pop()).flatten()
    }
}

impl Expr {
    /// Reads an expression in sympy's `srepr` form (`Add(Symbol('s70'), Integer(1))`).
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        let mut p = Parser {
            tokens: tokenize(text)?,
            pos: 0,
            text,
        };
        let e = p.expr()?;
        if p.pos != p.tokens.len() {
            return err(format!("trailing text in `{text}`"));
        }
        Ok(e)
    }

    /// The symbol this expression is, if it is one.
    pub fn as_symbol(&self) -> Option<&str> {
        match self {
            Expr::Sym(s) => Some(s),
            _ => None,
        }
    }

    /// The symbols the expression reads, sorted, once each.
    pub fn symbols(&self) -> Vec<String> {
        let mut out = std::collections::BTreeSet::new();
        self.collect_symbols(&mut out);
        out.into_iter().collect()
    }

    fn collect_symbols(&self, out: &mut std::collections::BTreeSet<String>) {
        match self {
            Expr::Int(_) | Expr::Bool(_) => {}
            Expr::Sym(s) => {
                out.insert(s.clone());
            }
            Expr::Add(v)
            | Expr::Mul(v)
            | Expr::Max(v)
            | Expr::Min(v)
            | Expr::And(v)
            | Expr::Or(v) => v.iter().for_each(|e| e.collect_symbols(out)),
            Expr::FloorDiv(a, b)
            | Expr::Mod(a, b)
            | Expr::CeilDiv(a, b)
            | Expr::Pow(a, b)
            | Expr::Cmp(_, a, b) => {
                a.collect_symbols(out);
                b.collect_symbols(out);
            }
            Expr::ModularIndexing(a, b, c) => {
                a.collect_symbols(out);
                b.collect_symbols(out);
                c.collect_symbols(out);
            }
            Expr::Not(a) => a.collect_symbols(out),
        }
    }

    /// The integer value under `bindings` (booleans are 0 and 1); an unbound symbol,
    /// a division by zero or an overflow is an error.
    pub fn eval(&self, bindings: &Bindings) -> Result<i64, ExprError> {
        let overflow = || ExprError(format!("`{self}` overflows 64 bits"));
        let all = |v: &[Expr]| -> Result<Vec<i64>, ExprError> {
            v.iter().map(|e| e.eval(bindings)).collect()
        };
        let divisor = |b: &Expr| -> Result<i64, ExprError> {
            match b.eval(bindings)? {
                0 => err(format!("`{self}` divides by zero")),
                d => Ok(d),
            }
        };
        Ok(match self {
            Expr::Int(v) => *v,
            Expr::Bool(b) => *b as i64,
            Expr::Sym(s) => match bindings.get(s) {
                Some(v) => *v,
                None => return err(format!("symbol `{s}` has no value")),
            },
            Expr::Add(v) => all(v)?
                .into_iter()
                .try_fold(0i64, |a, b| a.checked_add(b))
                .ok_or_else(overflow)?,
            Expr::Mul(v) => all(v)?
                .into_iter()
                .try_fold(1i64, |a, b| a.checked_mul(b))
                .ok_or_else(overflow)?,
            Expr::FloorDiv(a, b) => {
                let d = divisor(b)?;
                floor_div(a.eval(bindings)?, d)
            }
            Expr::Mod(a, b) => {
                let d = divisor(b)?;
                let x = a.eval(bindings)?;
                x - floor_div(x, d) * d
            }
            Expr::CeilDiv(a, b) => {
                let d = divisor(b)?;
                -floor_div(-a.eval(bindings)?, d)
            }
            Expr::ModularIndexing(a, b, c) => {
                let q = floor_div(a.eval(bindings)?, divisor(b)?);
                let m = divisor(c)?;
                q - floor_div(q, m) * m
            }
            Expr::Pow(a, b) => {
                let e = b.eval(bindings)?;
                let e = u32::try_from(e)
                    .map_err(|_| ExprError(format!("`{self}` has a negative exponent")))?;
                a.eval(bindings)?.checked_pow(e).ok_or_else(overflow)?
            }
            Expr::Max(v) => all(v)?
                .into_iter()
                .max()
                .ok_or_else(|| ExprError("`Max()` of nothing".into()))?,
            Expr::Min(v) => all(v)?
                .into_iter()
                .min()
                .ok_or_else(|| ExprError("`Min()` of nothing".into()))?,
            Expr::Cmp(op, a, b) => {
                let (x, y) = (a.eval(bindings)?, b.eval(bindings)?);
                (match op {
                    CmpOp::Eq => x == y,
                    CmpOp::Ne => x != y,
                    CmpOp::Lt => x < y,
                    CmpOp::Le => x <= y,
                    CmpOp::Gt => x > y,
                    CmpOp::Ge => x >= y,
                }) as i64
            }
            Expr::And(v) => all(v)?.iter().all(|&x| x != 0) as i64,
            Expr::Or(v) => all(v)?.iter().any(|&x| x != 0) as i64,
            Expr::Not(a) => (a.eval(bindings)? == 0) as i64,
        })
    }

    /// The expression in sympy's `srepr` form, symbols without their assumptions;
    /// [`Expr::parse`] reads it back.
    pub fn to_sympy(&self) -> String {
        let list = |name: &str, v: &[Expr]| {
            format!(
                "{name}({})",
                v.iter().map(Expr::to_sympy).collect::<Vec<_>>().join(", ")
            )
        };
        let pair =
            |name: &str, a: &Expr, b: &Expr| format!("{name}({}, {})", a.to_sympy(), b.to_sympy());
        match self {
            Expr::Int(v) => format!("Integer({v})"),
            Expr::Bool(b) => if *b { "true" } else { "false" }.to_string(),
            Expr::Sym(s) => format!("Symbol('{s}')"),
            Expr::Add(v) => list("Add", v),
            Expr::Mul(v) => list("Mul", v),
            Expr::Max(v) => list("Max", v),
            Expr::Min(v) => list("Min", v),
            Expr::And(v) => list("And", v),
            Expr::Or(v) => list("Or", v),
            Expr::Not(a) => format!("Not({})", a.to_sympy()),
            Expr::FloorDiv(a, b) => pair("FloorDiv", a, b),
            Expr::Mod(a, b) => pair("PythonMod", a, b),
            Expr::CeilDiv(a, b) => pair("CeilDiv", a, b),
            Expr::Pow(a, b) => pair("Pow", a, b),
            Expr::Cmp(op, a, b) => pair(op.sympy(), a, b),
            Expr::ModularIndexing(a, b, c) => format!(
                "ModularIndexing({}, {}, {})",
                a.to_sympy(),
                b.to_sympy(),
                c.to_sympy()
            ),
        }
    }
}

fn floor_div(a: i64, b: i64) -> i64 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// Infix, for messages: `4*s72`, `s70 + 1`, `s0 // 2`.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |f: &mut fmt::Formatter<'_>, v: &[Expr], sep: &str| -> fmt::Result {
            for (i, e) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                match e {
                    Expr::Add(_) | Expr::Cmp(..) => write!(f, "({e})")?,
                    _ => write!(f, "{e}")?,
                }
            }
            Ok(())
        };
        match self {
            Expr::Int(v) => write!(f, "{v}"),
            Expr::Bool(b) => write!(f, "{b}"),
            Expr::Sym(s) => f.write_str(s),
            Expr::Add(v) => join(f, v, " + "),
            Expr::Mul(v) => join(f, v, "*"),
            Expr::Max(v) => {
                f.write_str("max(")?;
                join(f, v, ", ")?;
                f.write_str(")")
            }
            Expr::Min(v) => {
                f.write_str("min(")?;
                join(f, v, ", ")?;
                f.write_str(")")
            }
            Expr::And(v) => join(f, v, " and "),
            Expr::Or(v) => join(f, v, " or "),
            Expr::Not(a) => write!(f, "not ({a})"),
            Expr::FloorDiv(a, b) => write!(f, "({a}) // ({b})"),
            Expr::Mod(a, b) => write!(f, "({a}) % ({b})"),
            Expr::CeilDiv(a, b) => write!(f, "ceil(({a}) / ({b}))"),
            Expr::Pow(a, b) => write!(f, "({a})**({b})"),
            Expr::ModularIndexing(a, b, c) => write!(f, "(({a}) // ({b})) % ({c})"),
            Expr::Cmp(op, a, b) => write!(f, "{a} {} {b}", op.symbol()),
        }
    }
}

// ---------------------------------------------------------------------------
// Symbols, dimensions and binding.

/// A dynamic size of the program and the values torch.export allows it
/// (`range_constraints`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    pub name: String,
    pub min: i64,
    /// `None`: unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    /// The size of the example inputs the program was exported with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<i64>,
}

impl Symbol {
    pub fn contains(&self, v: i64) -> bool {
        v >= self.min && self.max.is_none_or(|m| v <= m)
    }

    /// `2..=64`, `1..` (unbounded).
    pub fn range(&self) -> String {
        match self.max {
            Some(m) => format!("{}..={m}", self.min),
            None => format!("{}..", self.min),
        }
    }
}

/// One dimension of a tensor: a number, or an expression over symbols.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Static(i64),
    Sym(Expr),
}

impl Dim {
    pub fn eval(&self, bindings: &Bindings) -> Result<i64, ExprError> {
        match self {
            Dim::Static(v) => Ok(*v),
            Dim::Sym(e) => e.eval(bindings),
        }
    }

    /// `-1` for a symbolic dimension (the manifest's "any size" mark).
    pub fn static_or_dynamic(&self) -> i64 {
        match self {
            Dim::Static(v) => *v,
            Dim::Sym(_) => -1,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(v) => write!(f, "{v}"),
            Dim::Sym(e) => write!(f, "{e}"),
        }
    }
}

/// A dimension is written as a number or as a string in sympy form.
impl Serialize for Dim {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Dim::Static(v) => s.serialize_i64(*v),
            Dim::Sym(e) => s.serialize_str(&e.to_sympy()),
        }
    }
}

impl<'de> Deserialize<'de> for Dim {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Dim, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(v) => Ok(Dim::Static(v)),
            Raw::Text(t) => Expr::parse(&t)
                .map(|e| match e {
                    Expr::Int(v) => Dim::Static(v),
                    e => Dim::Sym(e),
                })
                .map_err(serde::de::Error::custom),
        }
    }
}

/// `[s43, 4, s53]`.
pub fn describe_dims(dims: &[Dim]) -> String {
    format!(
        "[{}]",
        dims.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `s43=2, s53=17`.
pub fn describe_bindings(b: &Bindings) -> String {
    b.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `s43=2,s53=17` (the form [`describe_bindings`] writes, spaces allowed).
pub fn parse_bindings(text: &str) -> Result<Bindings, String> {
    let mut b = Bindings::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}` is not SYMBOL=SIZE"))?;
        let v: i64 = v
            .trim()
            .parse()
            .map_err(|_| format!("`{part}`: `{}` is not an integer", v.trim()))?;
        if b.insert(k.trim().to_string(), v).is_some() {
            return Err(format!("`{}` is given twice", k.trim()));
        }
    }
    Ok(b)
}

/// A named tensor whose dimensions may be symbolic (a user input, for binding).
pub struct DimsOf<'a> {
    pub name: &'a str,
    pub dims: &'a [Dim],
}

/// The values of `symbols` that the concrete `shapes` of `tensors` give: each symbol
/// is read from the first dimension that is that symbol alone, every other dimension
/// is then checked against its expression, and every value against its symbol's range.
/// The error names the symbol, its range and the inputs involved.
pub fn bind(
    symbols: &[Symbol],
    tensors: &[DimsOf<'_>],
    shapes: &[&[i64]],
) -> Result<Bindings, String> {
    let mut bindings = Bindings::new();
    // Where each symbol's value was read: (tensor name, dimension).
    let mut source: BTreeMap<String, (&str, usize)> = BTreeMap::new();
    for (t, shape) in tensors.iter().zip(shapes) {
        if t.dims.len() != shape.len() {
            return Err(format!(
                "input `{}` has rank {} (shape {shape:?}), the program takes rank {} ({})",
                t.name,
                shape.len(),
                t.dims.len(),
                describe_dims(t.dims)
            ));
        }
        for (d, (dim, &size)) in t.dims.iter().zip(shape.iter()).enumerate() {
            let Dim::Sym(Expr::Sym(s)) = dim else {
                continue;
            };
            match bindings.get(s) {
                None => {
                    bindings.insert(s.clone(), size);
                    source.insert(s.clone(), (t.name, d));
                }
                Some(&v) if v != size => {
                    let (other, od) = source[s];
                    let range = symbols
                        .iter()
                        .find(|y| &y.name == s)
                        .map(|y| format!(" (range {})", y.range()))
                        .unwrap_or_default();
                    return Err(format!(
                        "inputs disagree on the size `{s}`{range}: `{other}` dimension {od} is {v}, `{}` dimension {d} is {size}; the program needs them equal",
                        t.name
                    ));
                }
                Some(_) => {}
            }
        }
    }
    for sym in symbols {
        let Some(&v) = bindings.get(&sym.name) else {
            continue;
        };
        if !sym.contains(v) {
            let (t, d) = source[&sym.name];
            let users: Vec<String> = tensors
                .iter()
                .flat_map(|t| {
                    t.dims
                        .iter()
                        .enumerate()
                        .filter(|(_, dim)| {
                            matches!(dim, Dim::Sym(e) if e.as_symbol() == Some(&sym.name))
                        })
                        .map(move |(d, _)| format!("`{}` dimension {d}", t.name))
                })
                .collect();
            return Err(format!(
                "size {v} of `{t}` dimension {d} is outside the range of `{}`, {} (the range the program was exported with, in {}); export with a wider Dim range to run it",
                sym.name,
                sym.range(),
                users.join(", ")
            ));
        }
    }
    for (t, shape) in tensors.iter().zip(shapes) {
        for (d, (dim, &size)) in t.dims.iter().zip(shape.iter()).enumerate() {
            let want = match dim.eval(&bindings) {
                Ok(v) => v,
                Err(e) => {
                    return Err(format!(
                    "input `{}` dimension {d} is {dim}, which no input dimension determines ({e})",
                    t.name
                ))
                }
            };
            if want != size {
                let given = if bindings.is_empty() {
                    String::new()
                } else {
                    format!(" with {}", describe_bindings(&bindings))
                };
                return Err(format!(
                    "input `{}` dimension {d} is {size}, the program needs {dim} = {want}{given}",
                    t.name
                ));
            }
        }
    }
    Ok(bindings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(pairs: &[(&str, i64)]) -> Bindings {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn reads_and_evaluates_torch_export_sizes() {
        let e = Expr::parse("Mul(Integer(4), Symbol('s72', positive=True, integer=True))").unwrap();
        assert_eq!(e.eval(&b(&[("s72", 3)])).unwrap(), 12);
        assert_eq!(e.to_string(), "4*s72");
        let e = Expr::parse("Add(Symbol('s70', positive=True, integer=True), Integer(1))").unwrap();
        assert_eq!(e.eval(&b(&[("s70", 9)])).unwrap(), 10);
        assert_eq!(Expr::parse(&e.to_sympy()).unwrap(), e);
        let e = Expr::parse("FloorDiv(Add(Symbol('s0'), Integer(-1)), Integer(2))").unwrap();
        assert_eq!(e.eval(&b(&[("s0", 0)])).unwrap(), -1);
        assert_eq!(e.eval(&b(&[("s0", 8)])).unwrap(), 3);
        let e = Expr::parse("CeilDiv(Symbol('s0'), Integer(4))").unwrap();
        assert_eq!(e.eval(&b(&[("s0", 9)])).unwrap(), 3);
        let e = Expr::parse("PythonMod(Integer(-7), Integer(3))").unwrap();
        assert_eq!(e.eval(&Bindings::new()).unwrap(), 2);
        let e = Expr::parse("Max(Integer(1), Min(Symbol('a'), Integer(5)))").unwrap();
        assert_eq!(e.eval(&b(&[("a", 9)])).unwrap(), 5);
        let e = Expr::parse("GreaterThan(Symbol('s0'), Integer(2))").unwrap();
        assert_eq!(e.eval(&b(&[("s0", 2)])).unwrap(), 1);
        assert_eq!(e.eval(&b(&[("s0", 1)])).unwrap(), 0);
    }

    #[test]
    fn refuses_what_it_cannot_evaluate() {
        assert!(Expr::parse("Rational(1, 2)")
            .unwrap_err()
            .0
            .contains("Rational"));
        assert!(Expr::parse("Symbol('s0'").is_err());
        assert_eq!(Expr::parse("s0").unwrap(), Expr::Sym("s0".into()));
        let e = Expr::parse("FloorDiv(Symbol('s0'), Integer(0))").unwrap();
        assert!(e.eval(&b(&[("s0", 1)])).unwrap_err().0.contains("zero"));
        assert!(Expr::parse("Symbol('x')")
            .unwrap()
            .eval(&Bindings::new())
            .is_err());
    }

    fn sym(name: &str, min: i64, max: i64) -> Symbol {
        Symbol {
            name: name.into(),
            min,
            max: Some(max),
            hint: None,
        }
    }

    #[test]
    fn binds_and_names_what_is_wrong() {
        let s = |n: &str| Dim::Sym(Expr::Sym(n.into()));
        let ids = [s("b"), s("t")];
        let mask = [s("b"), s("t")];
        let symbols = [sym("b", 1, 4), sym("t", 2, 64)];
        let tensors = [
            DimsOf {
                name: "input_ids",
                dims: &ids,
            },
            DimsOf {
                name: "attention_mask",
                dims: &mask,
            },
        ];
        let ok = bind(&symbols, &tensors, &[&[2, 17], &[2, 17]]).unwrap();
        assert_eq!(ok, b(&[("b", 2), ("t", 17)]));
        let e = bind(&symbols, &tensors, &[&[2, 17], &[3, 17]]).unwrap_err();
        assert!(e.contains("disagree on the size `b` (range 1..=4)"), "{e}");
        assert!(e.contains("`input_ids` dimension 0 is 2"), "{e}");
        assert!(e.contains("`attention_mask` dimension 0 is 3"), "{e}");
        let e = bind(&symbols, &tensors, &[&[2, 65], &[2, 65]]).unwrap_err();
        assert!(e.contains("size 65 of `input_ids` dimension 1"), "{e}");
        assert!(e.contains("range of `t`, 2..=64"), "{e}");
        let e = bind(&symbols, &tensors, &[&[2, 17, 1], &[2, 17]]).unwrap_err();
        assert!(e.contains("rank"), "{e}");
    }

    #[test]
    fn derived_dimensions_are_checked() {
        let x = [Dim::Sym(Expr::Sym("s".into())), Dim::Static(3)];
        let y = [Dim::Sym(Expr::Mul(vec![
            Expr::Int(2),
            Expr::Sym("s".into()),
        ]))];
        let tensors = [
            DimsOf {
                name: "x",
                dims: &x,
            },
            DimsOf {
                name: "y",
                dims: &y,
            },
        ];
        let symbols = [sym("s", 1, 8)];
        assert!(bind(&symbols, &tensors, &[&[4, 3], &[8]]).is_ok());
        let e = bind(&symbols, &tensors, &[&[4, 3], &[7]]).unwrap_err();
        assert!(e.contains("the program needs 2*s = 8"), "{e}");
        let e = bind(&symbols, &tensors, &[&[4, 2], &[8]]).unwrap_err();
        assert!(e.contains("dimension 1 is 2, the program needs 3"), "{e}");
    }

    #[test]
    fn dims_round_trip_through_json() {
        let dims = vec![
            Dim::Static(4),
            Dim::Sym(Expr::Add(vec![Expr::Sym("s70".into()), Expr::Int(1)])),
        ];
        let text = serde_json::to_string(&dims).unwrap();
        assert_eq!(text, r#"[4,"Add(Symbol('s70'), Integer(1))"]"#);
        let back: Vec<Dim> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, dims);
        assert_eq!(
            parse_bindings("s43=2, s53=17").unwrap(),
            b(&[("s43", 2), ("s53", 17)])
        );
        assert!(parse_bindings("s43").is_err());
    }
}

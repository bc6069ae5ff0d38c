//! Shape-polymorphic StableHLO of a dynamic program (`tpuc compile --emit mlir` without
//! `--specialize`): `@main` takes `?` dimensions and computes every size it needs from
//! its arguments (`get_dimension_size`), in the form jax.export writes, for a caller
//! that refines it for concrete shapes (jaxlib's `refine_polymorphic_shapes`) before XLA
//! sees it.
//!
//! How: the program is specialized for several sizes (every symbol at up to three
//! values, on a grid) and each specialization is lowered by the usual pipeline at
//! `-O0` (`-O1`'s CSE merges ops whose sizes coincide at some sizes only, and `-O2`
//! folds size-dependent values into constants and outlines composites per size),
//! whatever `-O` the user asked for. The programs must have the same structure; a number that
//! differs between them is a size, and each is fitted exactly, over all the programs,
//! as a polynomial of the symbols of degree two at most (`s0`, `4*s1`, `s0*s1`,
//! `s1 + 1`). In types such a number becomes `?`; the ops whose result shape is in
//! their type or attributes become their dynamic forms with a shape operand computed
//! from the symbols (`reshape` -> `dynamic_reshape`, `broadcast_in_dim` ->
//! `dynamic_broadcast_in_dim`, `iota` -> `dynamic_iota`, `slice` with sized bounds ->
//! `real_dynamic_slice`). Anything else that depends on the sizes (a structure that
//! changes with them, a size in another attribute or in a constant's value, a size
//! that is no such polynomial) is refused with an error naming the op: the output is
//! exact or absent.

use std::collections::BTreeMap;
use std::fmt::Write as _;

#[cfg(test)]
use tpuc_artifact::symbolic::Expr;
use tpuc_artifact::symbolic::{Bindings, Dim, Symbol};

use crate::driver::{lower_program, Emit, Stopwatch};
use crate::error::CompileError;
use crate::frontend::ExportedModel;
use crate::options::CompileOptions;
use crate::passes;
use crate::pipeline::ProgramFacts;

fn refuse(message: String) -> CompileError {
    CompileError::Dynamic(format!("shape-polymorphic StableHLO: {message}"))
}

// ---------------------------------------------------------------------------
// Tokens of the generic MLIR text.

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// Text that must be the same in every specialization.
    Text(String),
    /// A dimension of a `tensor<...>` type.
    Dim(i64),
    /// Any other integer (attribute values).
    Num(i64),
}

/// Splits one line into tokens: tensor types into their dimensions, integers apart,
/// identifiers, SSA names, strings and floats kept whole.
fn tokenize(line: &str) -> Vec<Tok> {
    let b = line.as_bytes();
    let mut out: Vec<Tok> = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, out: &mut Vec<Tok>| {
        if !text.is_empty() {
            out.push(Tok::Text(std::mem::take(text)));
        }
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if line[i..].starts_with("tensor<") {
            text.push_str("tensor<");
            flush(&mut text, &mut out);
            i += "tensor<".len();
            // dims: (digits 'x')*, then the element type up to '>'.
            loop {
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if i > start && i < b.len() && b[i] == b'x' {
                    out.push(Tok::Dim(line[start..i].parse().unwrap_or(0)));
                    out.push(Tok::Text("x".into()));
                    i += 1;
                } else {
                    i = start;
                    break;
                }
            }
            continue;
        }
        if c == b'"' {
            let end = line[i + 1..].find('"').map_or(b.len(), |e| i + 1 + e + 1);
            text.push_str(&line[i..end]);
            i = end;
            continue;
        }
        if c == b'%' || c == b'@' || c == b'^' || c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            i += 1;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'.' | b'$' | b'-'))
            {
                // `-` only inside SSA/symbol names.
                if b[i] == b'-' && !matches!(b[start], b'%' | b'@') {
                    break;
                }
                i += 1;
            }
            text.push_str(&line[start..i]);
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let mut float = line[start..i].contains(['e', 'E', 'x']);
            if i < b.len() && b[i] == b'.' {
                float = true;
                i += 1;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || (matches!(b[i], b'+' | b'-') && matches!(b[i - 1], b'e' | b'E')))
                {
                    i += 1;
                }
            }
            if float {
                text.push_str(&line[start..i]);
            } else {
                flush(&mut text, &mut out);
                out.push(Tok::Num(line[start..i].parse().unwrap_or(0)));
            }
            continue;
        }
        text.push(c as char);
        i += 1;
    }
    flush(&mut text, &mut out);
    out
}

// ---------------------------------------------------------------------------
// Polynomials of the symbols.

/// `Σ coef · Π symbols`, the symbols by index; the empty product is the constant.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Poly(Vec<(i64, Vec<usize>)>);

impl Poly {
    #[cfg(test)]
    fn constant(&self) -> Option<i64> {
        match self.0.as_slice() {
            [] => Some(0),
            [(c, m)] if m.is_empty() => Some(*c),
            _ => None,
        }
    }

    #[cfg(test)]
    fn to_expr(&self, symbols: &[Symbol]) -> Expr {
        let terms: Vec<Expr> = self
            .0
            .iter()
            .map(|(c, m)| {
                let mut f: Vec<Expr> = Vec::new();
                if *c != 1 || m.is_empty() {
                    f.push(Expr::Int(*c));
                }
                f.extend(m.iter().map(|&s| Expr::Sym(symbols[s].name.clone())));
                if f.len() == 1 {
                    f.pop().unwrap()
                } else {
                    Expr::Mul(f)
                }
            })
            .collect();
        match terms.len() {
            0 => Expr::Int(0),
            1 => terms.into_iter().next().unwrap(),
            _ => Expr::Add(terms),
        }
    }
}

/// The monomials fitted: 1, each symbol, each product of two (a square only where the
/// samples give the symbol three values).
fn monomials(n: usize, values_per_symbol: &[usize]) -> Vec<Vec<usize>> {
    let mut m = vec![vec![]];
    for i in 0..n {
        m.push(vec![i]);
    }
    for (i, &values) in values_per_symbol.iter().enumerate().take(n) {
        for j in i..n {
            if i != j || values >= 3 {
                m.push(vec![i, j]);
            }
        }
    }
    m
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Frac(i128, i128);

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

impl Frac {
    fn new(n: i128, d: i128) -> Frac {
        let g = gcd(n, d).max(1);
        let s = if d < 0 { -1 } else { 1 };
        Frac(s * n / g, s * d / g)
    }
    fn sub(self, o: Frac) -> Frac {
        Frac::new(self.0 * o.1 - o.0 * self.1, self.1 * o.1)
    }
    fn mul(self, o: Frac) -> Frac {
        Frac::new(self.0 * o.0, self.1 * o.1)
    }
    fn div(self, o: Frac) -> Frac {
        Frac::new(self.0 * o.1, self.1 * o.0)
    }
    fn is_zero(self) -> bool {
        self.0 == 0
    }
}

/// The polynomial over `basis` that gives `values` at `points` exactly, if one does
/// (with integer coefficients).
fn fit(points: &[Vec<i64>], values: &[i64], basis: &[Vec<usize>]) -> Option<Poly> {
    let m = basis.len();
    let mut rows: Vec<Vec<Frac>> = points
        .iter()
        .zip(values)
        .map(|(p, &v)| {
            let mut r: Vec<Frac> = basis
                .iter()
                .map(|mono| Frac::new(mono.iter().map(|&s| p[s] as i128).product(), 1))
                .collect();
            r.push(Frac::new(v as i128, 1));
            r
        })
        .collect();
    let mut pivots = Vec::new();
    let mut row = 0;
    for col in 0..m {
        let Some(p) = (row..rows.len()).find(|&r| !rows[r][col].is_zero()) else {
            continue;
        };
        rows.swap(row, p);
        let pivot = rows[row][col];
        for x in rows[row].iter_mut() {
            *x = x.div(pivot);
        }
        for r in 0..rows.len() {
            if r != row && !rows[r][col].is_zero() {
                let f = rows[r][col];
                let pr = rows[row].clone();
                for (x, y) in rows[r].iter_mut().zip(pr) {
                    *x = x.sub(f.mul(y));
                }
            }
        }
        pivots.push(col);
        row += 1;
    }
    // Inconsistent (a row 0 = c), or undetermined (the samples do not tell the
    // monomials apart): no exact fit.
    if rows[row..].iter().any(|r| !r[m].is_zero()) || pivots.len() < m {
        return None;
    }
    let mut terms = Vec::new();
    for (r, &col) in pivots.iter().enumerate() {
        let Frac(n, d) = rows[r][m];
        if d != 1 {
            return None;
        }
        if n != 0 {
            terms.push((i64::try_from(n).ok()?, basis[col].clone()));
        }
    }
    terms.sort_by(|a, b| (b.1.len(), &a.1).cmp(&(a.1.len(), &b.1)));
    Some(Poly(terms))
}

/// Up to three values of each symbol, from its range: two and up (a size of one or
/// zero would let lowerings drop ops), preferring primes not among the program's
/// static dimensions (so that no size coincides with another number of the program).
fn sample_values(symbol: &Symbol, avoid: &[i64]) -> Vec<i64> {
    let lo = symbol.min.max(2);
    let hi = symbol.max.unwrap_or(lo + 64).min(lo + 4096);
    let prime = |v: i64| v >= 2 && (2..v).take_while(|d| d * d <= v).all(|d| v % d != 0);
    let mut candidates: Vec<i64> = (lo..=hi).collect();
    candidates.sort_by_key(|&v| (avoid.contains(&v), !prime(v) || v < 5, v));
    let mut picked: Vec<i64> = candidates.into_iter().take(3).collect();
    if picked.is_empty() {
        picked.push(symbol.min);
    }
    picked.sort();
    picked
}

// ---------------------------------------------------------------------------
// The program.

/// A number of the program: the same in every specialization, or a size.
#[derive(Clone, Debug)]
enum Value {
    Fixed(i64),
    Size(Poly),
}

struct Line {
    toks: Vec<Tok>,
    values: Vec<Option<Value>>,
}

/// Shape values emitted at the top of `@main`: symbols, polynomials, shape vectors.
#[derive(Default)]
struct Shapes {
    lines: Vec<String>,
    polys: BTreeMap<Poly, String>,
    vectors: BTreeMap<Vec<String>, String>,
    consts: BTreeMap<i64, String>,
}

impl Shapes {
    fn constant(&mut self, v: i64) -> String {
        if let Some(n) = self.consts.get(&v) {
            return n.clone();
        }
        let name = format!("%shape_c{}", self.consts.len());
        self.lines.push(format!(
            "{name} = \"stablehlo.constant\"() {{value = dense<{v}> : tensor<i64>}} : () -> tensor<i64>"
        ));
        self.consts.insert(v, name.clone());
        name
    }

    /// A scalar `tensor<i64>` holding `poly`, symbols named `sym_values`.
    fn poly(&mut self, poly: &Poly, sym_values: &[String]) -> String {
        if let Some(n) = self.polys.get(poly) {
            return n.clone();
        }
        let mut acc: Option<String> = None;
        let k = self.polys.len();
        for (t, (coef, mono)) in poly.0.iter().enumerate() {
            let mut term: Option<String> = None;
            if *coef != 1 || mono.is_empty() {
                term = Some(self.constant(*coef));
            }
            for (f, &s) in mono.iter().enumerate() {
                term = Some(match term {
                    None => sym_values[s].clone(),
                    Some(prev) => {
                        let name = format!("%shape_p{k}_t{t}_f{f}");
                        self.lines.push(format!(
                            "{name} = \"stablehlo.multiply\"({prev}, {}) : (tensor<i64>, tensor<i64>) -> tensor<i64>",
                            sym_values[s]
                        ));
                        name
                    }
                });
            }
            let term = term.expect("a term");
            acc = Some(match acc {
                None => term,
                Some(prev) => {
                    let name = format!("%shape_p{k}_t{t}");
                    self.lines.push(format!(
                        "{name} = \"stablehlo.add\"({prev}, {term}) : (tensor<i64>, tensor<i64>) -> tensor<i64>"
                    ));
                    name
                }
            });
        }
        let value = acc.unwrap_or_else(|| self.constant(0));
        self.polys.insert(poly.clone(), value.clone());
        value
    }

    /// A `tensor<Nxi64>` of `dims`.
    fn vector(&mut self, dims: &[Value], sym_values: &[String]) -> String {
        let scalars: Vec<String> = dims
            .iter()
            .map(|d| match d {
                Value::Fixed(v) => self.constant(*v),
                Value::Size(p) => self.poly(p, sym_values),
            })
            .collect();
        if let Some(n) = self.vectors.get(&scalars) {
            return n.clone();
        }
        let k = self.vectors.len();
        let mut parts = Vec::new();
        for (i, s) in scalars.iter().enumerate() {
            let name = format!("%shape_v{k}_{i}");
            self.lines.push(format!(
                "{name} = \"stablehlo.reshape\"({s}) : (tensor<i64>) -> tensor<1xi64>"
            ));
            parts.push(name);
        }
        let name = format!("%shape_v{k}");
        let n = parts.len();
        if n == 0 {
            self.lines.push(format!(
                "{name} = \"stablehlo.constant\"() {{value = dense<> : tensor<0xi64>}} : () -> tensor<0xi64>"
            ));
        } else {
            self.lines.push(format!(
                "{name} = \"stablehlo.concatenate\"({}) {{dimension = 0 : i64}} : ({}) -> tensor<{n}xi64>",
                parts.join(", "),
                vec!["tensor<1xi64>"; n].join(", ")
            ));
        }
        self.vectors.insert(scalars, name.clone());
        name
    }
}

/// The text of a line with every size in a type written `?`.
fn render(line: &Line) -> String {
    let mut s = String::new();
    for (t, v) in line.toks.iter().zip(&line.values) {
        match (t, v) {
            (Tok::Text(x), _) => s.push_str(x),
            (Tok::Dim(_), Some(Value::Size(_))) => s.push('?'),
            (Tok::Dim(d), _) | (Tok::Num(d), _) => {
                let _ = write!(s, "{d}");
            }
        }
    }
    s
}

/// The values of the dimensions of the last tensor type of a line (its result).
fn result_dims(line: &Line) -> Vec<Value> {
    let start = line
        .toks
        .iter()
        .rposition(|t| matches!(t, Tok::Text(x) if x.ends_with("tensor<")))
        .unwrap_or(0);
    line.toks[start..]
        .iter()
        .zip(&line.values[start..])
        .filter_map(|(t, v)| match (t, v) {
            (Tok::Dim(d), None) => Some(Value::Fixed(*d)),
            (Tok::Dim(_), Some(v)) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

/// The integers of attribute `name` of a line (`name = array<i64: 0, 7>`, or
/// `name = dense<[[0, 0], [4, 0]]> : ...`), in order.
fn attribute_values(line: &Line, name: &str) -> Option<Vec<Value>> {
    let key = format!("{name} = ");
    let at = line.toks.iter().position(|t| {
        matches!(t, Tok::Text(x) if x.find(&key).is_some_and(|i| i == 0 || !x.as_bytes()[i - 1].is_ascii_alphanumeric() && x.as_bytes()[i - 1] != b'_'))
    })?;
    let mut out = Vec::new();
    for (t, v) in line.toks[at + 1..].iter().zip(&line.values[at + 1..]) {
        match (t, v) {
            (Tok::Num(n), None) => out.push(Value::Fixed(*n)),
            (Tok::Num(_), Some(v)) => out.push(v.clone()),
            (Tok::Text(x), _) if x.contains('>') => break,
            _ => {}
        }
    }
    Some(out)
}

/// The line index of the `})` that closes the region opened at the end of line `k`.
fn region_end(lines: &[Line], k: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, l) in lines.iter().enumerate().skip(k) {
        let t = render(l);
        let t = t.trim();
        if t.starts_with("})") || t.starts_with('}') {
            depth -= 1;
        }
        if t.ends_with("({") || t.ends_with('{') && !t.starts_with('}') {
            depth += 1;
        }
        if t.starts_with("}, {") {
            depth += 1;
        }
        if depth == 0 {
            return Some(j);
        }
    }
    None
}

/// Replaces the op name, appends `extra` operands (with their types) to a
/// single-result op line, and drops its attribute dictionary when `drop_attributes`.
fn rewrite_op(
    text: &str,
    from: &str,
    to: &str,
    extra: &[String],
    extra_types: &[String],
    drop_attributes: bool,
) -> Option<String> {
    let name_at = text.find(&format!("\"{from}\""))?;
    let open = name_at + from.len() + 2;
    if text.as_bytes().get(open) != Some(&b'(') {
        return None;
    }
    let close = open + text[open..].find(')')?;
    let operands = &text[open + 1..close];
    let mut all: Vec<&str> = operands.split(", ").filter(|s| !s.is_empty()).collect();
    all.extend(extra.iter().map(String::as_str));
    let sig = text.rfind(" : (")?;
    let arrow = sig + text[sig..].find(") -> ")?;
    let types = &text[sig + 4..arrow];
    let mut tys: Vec<&str> = if types.is_empty() {
        Vec::new()
    } else {
        vec![types]
    };
    tys.extend(extra_types.iter().map(String::as_str));
    let middle = if drop_attributes {
        String::new()
    } else {
        text[close + 1..sig].to_string()
    };
    Some(format!(
        "{}\"{to}\"({}){middle} : ({}){}",
        &text[..name_at],
        all.join(", "),
        tys.join(", "),
        &text[arrow + 1..]
    ))
}

/// The shape-polymorphic StableHLO of a dynamic program (see the module doc).
pub(crate) fn emit(
    model: &mut ExportedModel,
    options: &CompileOptions,
) -> Result<String, CompileError> {
    let dynamic = model.dynamic.as_ref().expect("a dynamic program");
    let symbols = dynamic.signature.symbols.clone();
    let inputs = dynamic.signature.inputs.clone();
    let n = symbols.len();
    if n == 0 || n > 4 {
        return Err(refuse(format!(
            "{n} symbols; tpuc writes it for programs of 1 to 4 dynamic sizes"
        )));
    }
    // Numbers the sizes should not coincide with.
    let mut avoid: Vec<i64> = model
        .graph
        .tensors
        .values()
        .flat_map(|m| m.shape.iter().copied())
        .collect();
    avoid.sort();
    avoid.dedup();
    let per_symbol: Vec<Vec<i64>> = symbols.iter().map(|s| sample_values(s, &avoid)).collect();
    let mut points: Vec<Vec<i64>> = vec![vec![]];
    for values in &per_symbol {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |&v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    let basis = monomials(n, &per_symbol.iter().map(Vec::len).collect::<Vec<_>>());
    let lowering = CompileOptions {
        // -O0: no CSE, so that no two ops merge at some sizes and not at others.
        opt_level: passes::OptLevel::O0,
        ..options.clone()
    };
    let mut texts = Vec::new();
    for p in &points {
        let sizes: Bindings = symbols
            .iter()
            .zip(p)
            .map(|(s, &v)| (s.name.clone(), v))
            .collect();
        model.specialize(&sizes)?;
        let ctx = crate::new_context();
        let facts = ProgramFacts::of(model, &lowering, Emit::Text)?;
        let lowered = lower_program(&ctx, model, &lowering, &facts, &mut Stopwatch::start())?;
        texts.push(crate::print_program(&lowered.module)?);
    }
    let example = model.dynamic.as_ref().unwrap().example_sizes();
    model.specialize(&example)?;

    // Line by line, token by token: what is fixed and what is a size.
    let split: Vec<Vec<&str>> = texts.iter().map(|t| t.lines().collect()).collect();
    if split.iter().any(|l| l.len() != split[0].len()) {
        return Err(refuse(format!(
            "the program's structure depends on its sizes (its specializations for {} have different op counts)",
            describe_points(&symbols, &points)
        )));
    }
    let mut lines = Vec::new();
    for (k, first) in split[0].iter().enumerate() {
        let all: Vec<Vec<Tok>> = split.iter().map(|l| tokenize(l[k])).collect();
        let toks = all[0].clone();
        let mut values = Vec::with_capacity(toks.len());
        for (i, t) in toks.iter().enumerate() {
            let same_shape = all.iter().all(|a| {
                a.len() == toks.len()
                    && std::mem::discriminant(&a[i]) == std::mem::discriminant(t)
                    && (matches!(t, Tok::Dim(_) | Tok::Num(_)) || a[i] == *t)
            });
            if !same_shape {
                return Err(refuse(format!(
                    "the op `{}` differs between sizes beyond its numbers (its lowering depends on the sizes)",
                    first.trim()
                )));
            }
            let nums: Vec<i64> = all
                .iter()
                .map(|a| match a[i] {
                    Tok::Dim(v) | Tok::Num(v) => v,
                    Tok::Text(_) => 0,
                })
                .collect();
            values.push(match t {
                Tok::Text(_) => None,
                _ if nums.iter().all(|&v| v == nums[0]) => None,
                _ => Some(Value::Size(fit(&points, &nums, &basis).ok_or_else(|| {
                    refuse(format!(
                        "a number of `{}` takes the values {nums:?} at the sizes {}, which no polynomial of the sizes of degree two gives",
                        first.trim(),
                        describe_points(&symbols, &points)
                    ))
                })?)),
            });
        }
        lines.push(Line { toks, values });
    }

    // The symbols' values, from the first input dimension that is each symbol alone.
    let main_args_line = lines
        .iter()
        .position(|l| render(l).contains("sym_name = \"main\""))
        .map(|k| k + 1)
        .ok_or_else(|| CompileError::Internal("the program has no @main".into()))?;
    let header = render(&lines[main_args_line]);
    let arg_names: Vec<String> = header
        .trim()
        .trim_start_matches("^bb0(")
        .split("%")
        .skip(1)
        .map(|s| format!("%{}", s.split(':').next().unwrap_or("")))
        .collect();
    let user_inputs = model
        .graph
        .inputs
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == crate::frontend::InputKind::UserInput)
        .map(|(i, _)| i)
        .collect::<Vec<_>>();
    let mut shapes = Shapes::default();
    let mut sym_values = Vec::new();
    for (si, sym) in symbols.iter().enumerate() {
        let found = inputs.iter().enumerate().find_map(|(ui, (_, dims))| {
            dims.iter()
                .position(|d| matches!(d, Dim::Sym(e) if e.as_symbol() == Some(&sym.name)))
                .map(|d| (ui, d))
        });
        let (ui, d) = found.ok_or_else(|| {
            refuse(format!(
                "the size `{}` is no input dimension of its own",
                sym.name
            ))
        })?;
        let arg = arg_names.get(user_inputs[ui]).ok_or_else(|| {
            CompileError::Internal("@main's arguments are not the graph's inputs".into())
        })?;
        let ty = header
            .split(&format!("{arg}: "))
            .nth(1)
            .and_then(|t| t.split([',', ')']).next())
            .unwrap_or("")
            .to_string();
        let raw = format!("%shape_s{si}_i32");
        let value = format!("%shape_s{si}");
        shapes.lines.push(format!(
            "{raw} = \"stablehlo.get_dimension_size\"({arg}) {{dimension = {d} : i64}} : ({ty}) -> tensor<i32>"
        ));
        shapes.lines.push(format!(
            "{value} = \"stablehlo.convert\"({raw}) : (tensor<i32>) -> tensor<i64>"
        ));
        sym_values.push(value);
    }

    // Rewrite: sizes in types as `?`, shaped ops in their dynamic forms.
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut in_main = false;
    let mut extra_functions: Vec<String> = Vec::new();
    let mut skip_to = 0usize;
    for (k, line) in lines.iter().enumerate() {
        if k < skip_to {
            continue;
        }
        let text = render(line);
        if text.contains("\"func.func\"") {
            in_main = text.contains("sym_name = \"main\"");
        }
        if text.contains("= \"stablehlo.reduce_window\"(") && text.trim_end().ends_with("({") {
            let close = region_end(&lines, k).ok_or_else(|| {
                CompileError::Internal(format!("no end of the region of `{}`", text.trim()))
            })?;
            let sized = lines[close]
                .toks
                .iter()
                .zip(&lines[close].values)
                .any(|(t, v)| matches!(t, Tok::Num(_)) && v.is_some());
            if sized {
                if !in_main {
                    return Err(refuse(format!(
                        "`{}` outside @main has a size-dependent window",
                        text.trim()
                    )));
                }
                let (call, function) = dynamic_reduce_window(
                    &lines,
                    k,
                    close,
                    extra_functions.len(),
                    &mut shapes,
                    &sym_values,
                )?;
                out.push(call);
                extra_functions.push(function);
                skip_to = close + 1;
                continue;
            }
        }
        let varies = line.values.iter().any(Option::is_some);
        if !varies {
            out.push(text);
            continue;
        }
        let num_varies = line
            .toks
            .iter()
            .zip(&line.values)
            .any(|(t, v)| matches!(t, Tok::Num(_)) && v.is_some());
        let result_varies = {
            let dims = result_dims(line);
            dims.iter().any(|d| matches!(d, Value::Size(_)))
        };
        let op = text
            .split('"')
            .nth(1)
            .filter(|_| text.contains(" = \"") || text.trim_start().starts_with('"'))
            .unwrap_or("")
            .to_string();
        let needs_shape = result_varies
            && matches!(
                op.as_str(),
                "stablehlo.reshape" | "stablehlo.broadcast_in_dim" | "stablehlo.iota"
            );
        let sized_slice = op == "stablehlo.slice" && (num_varies || result_varies);
        if (needs_shape || sized_slice) && !in_main {
            return Err(refuse(format!(
                "`{}` outside @main needs a shape operand",
                text.trim()
            )));
        }
        let rewritten = if needs_shape {
            let dims = result_dims(line);
            let shape = shapes.vector(&dims, &sym_values);
            let ty = format!("tensor<{}xi64>", dims.len());
            let to = match op.as_str() {
                "stablehlo.reshape" => "stablehlo.dynamic_reshape",
                "stablehlo.broadcast_in_dim" => "stablehlo.dynamic_broadcast_in_dim",
                _ => "stablehlo.dynamic_iota",
            };
            rewrite_op(&text, &op, to, &[shape], &[ty], false)
        } else if sized_slice {
            let get = |name: &str| attribute_values(line, name);
            match (get("start_indices"), get("limit_indices"), get("strides")) {
                (Some(start), Some(limit), Some(strides)) => {
                    let r = start.len();
                    let ty = format!("tensor<{r}xi64>");
                    let s = shapes.vector(&start, &sym_values);
                    let l = shapes.vector(&limit, &sym_values);
                    let st = shapes.vector(&strides, &sym_values);
                    rewrite_op(
                        &text,
                        &op,
                        "stablehlo.real_dynamic_slice",
                        &[s, l, st],
                        &[ty.clone(), ty.clone(), ty],
                        true,
                    )
                }
                _ => None,
            }
        } else if op == "stablehlo.constant" && num_varies {
            // A size as a scalar integer constant (an index bound, a count): its value.
            let sizes: Vec<&Value> = line
                .toks
                .iter()
                .zip(&line.values)
                .filter(|(t, v)| matches!(t, Tok::Num(_)) && v.is_some())
                .filter_map(|(_, v)| v.as_ref())
                .collect();
            let ty = text.rsplit(" -> ").next().unwrap_or("").trim().to_string();
            let (name, _) = text.split_once(" = ").unwrap_or(("", ""));
            match (sizes.as_slice(), ty.as_str()) {
                ([Value::Size(p)], "tensor<i64>" | "tensor<i32>") if in_main => {
                    let v = shapes.poly(p, &sym_values);
                    Some(format!(
                        "{name} = \"stablehlo.convert\"({v}) : (tensor<i64>) -> {ty}"
                    ))
                }
                _ => {
                    return Err(refuse(format!(
                        "the constant `{}` has a size-dependent value",
                        split[0][k].trim()
                    )))
                }
            }
        } else if num_varies {
            return Err(refuse(format!(
                "`{}` has a size in an attribute tpuc does not make dynamic",
                split[0][k].trim()
            )));
        } else if op == "stablehlo.constant" {
            return Err(refuse(format!(
                "the constant `{}` has a size-dependent shape",
                split[0][k].trim()
            )));
        } else {
            Some(text.clone())
        };
        out.push(
            rewritten.ok_or_else(|| {
                CompileError::Internal(format!("cannot rewrite `{}`", text.trim()))
            })?,
        );
    }
    // The shape values go first in @main's body.
    let indent: String = out[main_args_line + 1]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let shape_lines: Vec<String> = shapes
        .lines
        .iter()
        .map(|l| format!("{indent}{l}"))
        .collect();
    out.splice(main_args_line + 1..main_args_line + 1, shape_lines);
    // The reducers of dynamic_reduce_window go before the module's closing line.
    let last = out.len() - 1;
    out.splice(last..last, extra_functions);
    let text = out.join("\n") + "\n";
    let ctx = crate::new_context();
    let module = melior::ir::Module::parse(&ctx, &text).ok_or_else(|| {
        CompileError::Internal("the shape-polymorphic program does not parse".into())
    })?;
    crate::print_module(&module)
}

/// A `reduce_window` (lines `open..=close`) whose window depends on the sizes as
/// `stablehlo.dynamic_reduce_window`, the custom call jax.export writes for it: the
/// window, strides, dilations and padding as operands, the reducer as a function.
/// Returns the call's line and the reducer's function.
fn dynamic_reduce_window(
    lines: &[Line],
    open: usize,
    close: usize,
    index: usize,
    shapes: &mut Shapes,
    sym_values: &[String],
) -> Result<(String, String), CompileError> {
    let head = render(&lines[open]);
    let tail = render(&lines[close]);
    let bad = || CompileError::Internal(format!("cannot rewrite `{}`", head.trim()));
    let name_at = head.find("\"stablehlo.reduce_window\"(").ok_or_else(bad)?;
    let operands_start = name_at + "\"stablehlo.reduce_window\"(".len();
    let operands_end = operands_start + head[operands_start..].find(')').ok_or_else(bad)?;
    let operands = &head[operands_start..operands_end];
    let result = &head[..name_at];
    let sig = tail.rfind(" : (").ok_or_else(bad)?;
    let arrow = sig + tail[sig..].find(") -> ").ok_or_else(bad)?;
    let operand_types = &tail[sig + 4..arrow];
    let result_types = &tail[arrow + 5..];
    let window = attribute_values(&lines[close], "window_dimensions").ok_or_else(bad)?;
    let r = window.len();
    let ones = || vec![Value::Fixed(1); r];
    let get =
        |name: &str, default: Vec<Value>| attribute_values(&lines[close], name).unwrap_or(default);
    let strides = get("window_strides", ones());
    let base = get("base_dilations", ones());
    let dilations = get("window_dilations", ones());
    let padding = get("padding", vec![Value::Fixed(0); 2 * r]);
    if [strides.len(), base.len(), dilations.len()] != [r, r, r] || padding.len() != 2 * r {
        return Err(bad());
    }
    let vectors: Vec<String> = [&window, &strides, &base, &dilations]
        .iter()
        .map(|v| shapes.vector(v, sym_values))
        .collect();
    let flat = shapes.vector(&padding, sym_values);
    let pad = format!("{flat}_pairs");
    shapes.lines.push(format!(
        "{pad} = \"stablehlo.reshape\"({flat}) : (tensor<{}xi64>) -> tensor<{r}x2xi64>",
        2 * r
    ));
    let reducer = format!("tpuc.dynamic_reduce_window.{index}");
    let vt = format!("tensor<{r}xi64>");
    let call = format!(
        "{result}\"stablehlo.custom_call\"({operands}, {}, {pad}) {{call_target_name = \"stablehlo.dynamic_reduce_window\", called_computations = [@\"{reducer}\"]}} : ({operand_types}, {vt}, {vt}, {vt}, {vt}, tensor<{r}x2xi64>) -> {result_types}",
        vectors.join(", ")
    );
    // The reducer: the region's block as a function, `stablehlo.return` as `func.return`.
    let body: Vec<String> = lines[open + 1..close].iter().map(render).collect();
    let block = body.first().ok_or_else(bad)?.trim().to_string();
    let args = block
        .strip_prefix("^bb0(")
        .and_then(|b| b.strip_suffix("):"))
        .ok_or_else(bad)?;
    let arg_types: Vec<&str> = args
        .split(", %")
        .map(|a| a.split_once(": ").map_or("", |x| x.1))
        .collect();
    let ret = body.last().ok_or_else(bad)?;
    let ret_types = ret
        .rsplit_once(" : (")
        .and_then(|(_, t)| t.strip_suffix(") -> ()"))
        .ok_or_else(bad)?;
    let mut f = format!(
        "  \"func.func\"() <{{function_type = ({}) -> ({ret_types}), sym_name = \"{reducer}\", sym_visibility = \"private\"}}> ({{\n",
        arg_types.join(", ")
    );
    for (i, l) in body.iter().enumerate() {
        let l = if i + 1 == body.len() {
            l.replace("\"stablehlo.return\"", "\"func.return\"")
        } else {
            l.clone()
        };
        f.push_str(&l);
        f.push('\n');
    }
    f.push_str("  }) : () -> ()");
    Ok((call, f))
}

fn describe_points(symbols: &[Symbol], points: &[Vec<i64>]) -> String {
    points
        .iter()
        .map(|p| {
            symbols
                .iter()
                .zip(p)
                .map(|(s, v)| format!("{}={v}", s.name))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_dimensions_are_their_own_tokens() {
        let t = tokenize("%3 = \"stablehlo.add\"(%1, %arg2) : (tensor<7x32xf32>, tensor<f32>) -> tensor<7x32xbf16>");
        let dims: Vec<i64> = t
            .iter()
            .filter_map(|t| match t {
                Tok::Dim(d) => Some(*d),
                _ => None,
            })
            .collect();
        assert_eq!(dims, vec![7, 32, 7, 32]);
        assert!(!t.iter().any(|t| matches!(t, Tok::Num(_))));
        let t = tokenize(
            "{limit_indices = array<i64: 7, 32>, value = dense<5.000000e-01> : tensor<f32>}",
        );
        let nums: Vec<i64> = t
            .iter()
            .filter_map(|t| match t {
                Tok::Num(d) => Some(*d),
                _ => None,
            })
            .collect();
        assert_eq!(nums, vec![7, 32]);
    }

    #[test]
    fn sizes_are_fitted_exactly_or_refused() {
        let points: Vec<Vec<i64>> = [2, 3, 4]
            .iter()
            .flat_map(|&a| [5, 7, 11].iter().map(move |&b| vec![a, b]))
            .collect();
        let basis = monomials(2, &[3, 3]);
        let values: Vec<i64> = points.iter().map(|p| 4 * p[0] * p[1] + p[1] + 1).collect();
        let poly = fit(&points, &values, &basis).unwrap();
        let symbols: Vec<Symbol> = ["a", "b"]
            .iter()
            .map(|n| Symbol {
                name: n.to_string(),
                min: 1,
                max: Some(64),
                hint: None,
            })
            .collect();
        let e = poly.to_expr(&symbols);
        for p in &points {
            let b: Bindings = [("a".to_string(), p[0]), ("b".to_string(), p[1])].into();
            assert_eq!(e.eval(&b).unwrap(), 4 * p[0] * p[1] + p[1] + 1);
        }
        // b // 2 is no polynomial.
        let values: Vec<i64> = points.iter().map(|p| p[1] / 2).collect();
        assert!(fit(&points, &values, &basis).is_none());
        assert_eq!(Poly(vec![(3, vec![])]).constant(), Some(3));
    }

    #[test]
    fn samples_stay_in_range_and_avoid_coincidences() {
        let s = Symbol {
            name: "s".into(),
            min: 1,
            max: Some(4),
            hint: None,
        };
        assert_eq!(sample_values(&s, &[]), vec![2, 3, 4]);
        let s = Symbol {
            name: "s".into(),
            min: 1,
            max: Some(64),
            hint: None,
        };
        assert_eq!(sample_values(&s, &[5, 16, 32]), vec![7, 11, 13]);
    }
}

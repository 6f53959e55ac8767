//! Partition filters in the Glue `GetPartitions` expression syntax, evaluated locally
//! for folder and S3 tables (for `glue://` tables the text goes to Glue as is).
//!
//! Supported: comparisons `col = 'v'`, `<>`, `!=`, `<`, `<=`, `>`, `>=`, `col IN ('a', 'b')`,
//! `col BETWEEN 'a' AND 'b'`, joined with `AND` / `OR`, `NOT`, and parentheses. Values are
//! compared as numbers when both sides parse as numbers, else as strings.

use std::cmp::Ordering;

use crate::error::{ReconError, Result};

/// A parsed partition filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// Both must hold.
    And(Box<Filter>, Box<Filter>),
    /// Either holds.
    Or(Box<Filter>, Box<Filter>),
    /// The negation.
    Not(Box<Filter>),
    /// `column op value`.
    Compare(String, Op, String),
    /// `column IN (values)`.
    In(String, Vec<String>),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `<>` or `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Op(Op),
    LParen,
    RParen,
    Comma,
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Op::Eq => "=",
            Op::Ne => "<>",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        })
    }
}

/// A token as the user wrote it, or the end of the filter, for messages.
fn found(token: Option<&Token>) -> String {
    match token {
        None => "the end of the filter".into(),
        Some(Token::Ident(s)) => format!("`{s}`"),
        Some(Token::Str(s)) => format!("'{s}'"),
        Some(Token::Op(op)) => format!("`{op}`"),
        Some(Token::LParen) => "`(`".into(),
        Some(Token::RParen) => "`)`".into(),
        Some(Token::Comma) => "`,`".into(),
    }
}

fn tokenize(text: &str) -> std::result::Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => i += 1,
            '(' => {
                out.push(Token::LParen);
                i += 1
            }
            ')' => {
                out.push(Token::RParen);
                i += 1
            }
            ',' => {
                out.push(Token::Comma);
                i += 1
            }
            '\'' | '"' => {
                let quote = c;
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("unterminated string".into()),
                        Some(&q) if q == quote => {
                            if chars.get(i + 1) == Some(&quote) {
                                s.push(quote);
                                i += 2;
                            } else {
                                i += 1;
                                break;
                            }
                        }
                        Some(&ch) => {
                            s.push(ch);
                            i += 1
                        }
                    }
                }
                out.push(Token::Str(s));
            }
            '=' => {
                out.push(Token::Op(Op::Eq));
                i += 1
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                out.push(Token::Op(Op::Ne));
                i += 2
            }
            '<' | '>' => {
                let next = chars.get(i + 1).copied();
                let (op, len) = match (c, next) {
                    ('<', Some('=')) => (Op::Le, 2),
                    ('<', Some('>')) => (Op::Ne, 2),
                    ('<', _) => (Op::Lt, 1),
                    ('>', Some('=')) => (Op::Ge, 2),
                    _ => (Op::Gt, 1),
                };
                out.push(Token::Op(op));
                i += len;
            }
            c if c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '`' => {
                let mut s = String::new();
                while let Some(&ch) = chars.get(i) {
                    if ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.' | '`') {
                        if ch != '`' {
                            s.push(ch);
                        }
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push(Token::Ident(s));
            }
            other => return Err(format!("unexpected character `{other}`")),
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek_keyword(&self, kw: &str) -> bool {
        matches!(self.tokens.get(self.pos), Some(Token::Ident(s)) if s.eq_ignore_ascii_case(kw))
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn or(&mut self) -> std::result::Result<Filter, String> {
        let mut left = self.and()?;
        while self.peek_keyword("or") {
            self.pos += 1;
            left = Filter::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> std::result::Result<Filter, String> {
        let mut left = self.unary()?;
        while self.peek_keyword("and") {
            self.pos += 1;
            left = Filter::And(Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> std::result::Result<Filter, String> {
        if self.peek_keyword("not") {
            self.pos += 1;
            return Ok(Filter::Not(Box::new(self.unary()?)));
        }
        if self.tokens.get(self.pos) == Some(&Token::LParen) {
            self.pos += 1;
            let inner = self.or()?;
            return match self.next() {
                Some(Token::RParen) => Ok(inner),
                _ => Err("missing `)`".into()),
            };
        }
        self.comparison()
    }

    fn value(&mut self) -> std::result::Result<String, String> {
        match self.next() {
            Some(Token::Str(s)) | Some(Token::Ident(s)) => Ok(s),
            other => Err(format!("expected a value, found {}", found(other.as_ref()))),
        }
    }

    fn comparison(&mut self) -> std::result::Result<Filter, String> {
        let column = match self.next() {
            Some(Token::Ident(c)) => c.to_lowercase(),
            other => {
                return Err(format!(
                    "expected a partition column, found {}",
                    found(other.as_ref())
                ));
            }
        };
        if self.peek_keyword("in") {
            self.pos += 1;
            if self.next() != Some(Token::LParen) {
                return Err("expected `(` after IN".into());
            }
            let mut values = vec![self.value()?];
            loop {
                match self.next() {
                    Some(Token::Comma) => values.push(self.value()?),
                    Some(Token::RParen) => break,
                    other => {
                        return Err(format!(
                            "expected `,` or `)` in IN list, found {}",
                            found(other.as_ref())
                        ));
                    }
                }
            }
            return Ok(Filter::In(column, values));
        }
        if self.peek_keyword("between") {
            self.pos += 1;
            let low = self.value()?;
            if !self.peek_keyword("and") {
                return Err("expected AND in BETWEEN".into());
            }
            self.pos += 1;
            let high = self.value()?;
            return Ok(Filter::And(
                Box::new(Filter::Compare(column.clone(), Op::Ge, low)),
                Box::new(Filter::Compare(column, Op::Le, high)),
            ));
        }
        let op = match self.next() {
            Some(Token::Op(op)) => op,
            other => {
                return Err(format!(
                    "expected a comparison after `{column}`, found {}",
                    found(other.as_ref())
                ));
            }
        };
        Ok(Filter::Compare(column, op, self.value()?))
    }
}

fn compare(a: &str, b: &str) -> Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        _ => a.cmp(b),
    }
}

impl Filter {
    /// Parse a filter; the error names the expression and what is wrong.
    pub fn parse(text: &str) -> Result<Filter> {
        let err = |m: String| ReconError::InvalidInput(format!("partition_filter `{text}`: {m}"));
        let tokens = tokenize(text).map_err(err)?;
        let mut p = Parser { tokens, pos: 0 };
        let f = p.or().map_err(err)?;
        if p.pos < p.tokens.len() {
            return Err(err(format!("unexpected {}", found(p.tokens.get(p.pos)))));
        }
        Ok(f)
    }

    /// The partition columns the filter names.
    pub fn columns(&self) -> Vec<&str> {
        match self {
            Filter::And(a, b) | Filter::Or(a, b) => {
                let mut v = a.columns();
                v.extend(b.columns());
                v
            }
            Filter::Not(a) => a.columns(),
            Filter::Compare(c, _, _) | Filter::In(c, _) => vec![c.as_str()],
        }
    }

    /// Whether a partition whose `known` columns hold these values may match, whatever
    /// its other columns hold: false only when the filter is false for every value of
    /// the columns not in `known`. Listing a table by prefix uses it to skip prefixes.
    pub fn may_match(&self, known: &[(String, Option<String>)]) -> bool {
        self.decided(known) != Some(false)
    }

    /// The filter's value when `known` decides it, `None` when it depends on a column
    /// not in `known`.
    fn decided(&self, known: &[(String, Option<String>)]) -> Option<bool> {
        match self {
            Filter::And(a, b) => match (a.decided(known), b.decided(known)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Filter::Or(a, b) => match (a.decided(known), b.decided(known)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Filter::Not(a) => a.decided(known).map(|v| !v),
            Filter::Compare(c, _, _) | Filter::In(c, _) => known
                .iter()
                .any(|(k, _)| k == c)
                .then(|| self.matches(known)),
        }
    }

    /// Evaluate against a partition's `(column, value)` pairs (column names lower-case).
    /// A column the partition lacks, or a NULL value, makes its comparison false.
    pub fn matches(&self, partition: &[(String, Option<String>)]) -> bool {
        let get = |c: &str| {
            partition
                .iter()
                .find(|(k, _)| k == c)
                .and_then(|(_, v)| v.as_deref())
        };
        match self {
            Filter::And(a, b) => a.matches(partition) && b.matches(partition),
            Filter::Or(a, b) => a.matches(partition) || b.matches(partition),
            Filter::Not(a) => !a.matches(partition),
            Filter::In(c, values) => {
                get(c).is_some_and(|v| values.iter().any(|x| compare(v, x).is_eq()))
            }
            Filter::Compare(c, op, value) => get(c).is_some_and(|v| {
                let o = compare(v, value);
                match op {
                    Op::Eq => o.is_eq(),
                    Op::Ne => o.is_ne(),
                    Op::Lt => o.is_lt(),
                    Op::Le => o.is_le(),
                    Op::Gt => o.is_gt(),
                    Op::Ge => o.is_ge(),
                }
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pairs: &[(&str, &str)]) -> Vec<(String, Option<String>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect()
    }

    #[test]
    fn comparisons_and_logic() {
        let f = Filter::parse("dt >= '2024-01-02' AND (region = 'eu' OR region IN ('us', 'ap'))")
            .unwrap();
        assert!(f.matches(&p(&[("dt", "2024-01-02"), ("region", "us")])));
        assert!(!f.matches(&p(&[("dt", "2024-01-01"), ("region", "eu")])));
        assert!(!f.matches(&p(&[("dt", "2024-01-03"), ("region", "sa")])));
    }

    #[test]
    fn numbers_compare_numerically_and_between() {
        let f = Filter::parse("hour BETWEEN 2 AND 10").unwrap();
        assert!(f.matches(&p(&[("hour", "9")])));
        assert!(!f.matches(&p(&[("hour", "11")])));
        assert!(
            Filter::parse("NOT hour <> 3")
                .unwrap()
                .matches(&p(&[("hour", "3")]))
        );
    }

    #[test]
    fn a_filter_is_decided_by_the_columns_it_knows_or_may_match() {
        let f = Filter::parse("region = 'eu' AND (dt >= '2024-01-03' OR NOT hour < 5)").unwrap();
        assert!(!f.may_match(&p(&[("region", "us")])));
        assert!(f.may_match(&p(&[("region", "eu")])));
        assert!(f.may_match(&p(&[("region", "eu"), ("dt", "2024-01-01")])));
        assert!(!f.may_match(&p(&[("region", "eu"), ("dt", "2024-01-01"), ("hour", "4")])));
        assert!(!f.may_match(&p(&[("dt", "2024-01-01"), ("hour", "4")])));
        assert!(Filter::parse("NOT dt = 'x'").unwrap().may_match(&[]));
    }

    #[test]
    fn bad_filter_names_expression() {
        let e = Filter::parse("dt >>").unwrap_err().to_string();
        assert!(e.contains("dt >>"), "{e}");
        assert!(e.ends_with("expected a value, found `>`"), "{e}");
        assert!(Filter::parse("dt = 'x").is_err());
    }

    #[test]
    fn errors_show_tokens_as_written() {
        let msg = |f: &str| Filter::parse(f).unwrap_err().to_string();
        assert!(msg("dt =").ends_with("found the end of the filter"));
        assert!(msg("'x' = dt").ends_with("expected a partition column, found 'x'"));
        assert!(msg("dt IN ('a' 'b')").ends_with("in IN list, found 'b'"));
        assert!(msg("dt ( 1").ends_with("after `dt`, found `(`"));
        assert!(msg("dt = 1 )").ends_with("unexpected `)`"));
    }
}

//! What one differing value pair looks like: the patterns a source value and a
//! target value fit (a power-of-ten scale, a constant shift, case only, ...), read
//! from the values as the findings show them.

use chrono::{NaiveDate, NaiveDateTime};

/// A way a target value differs from its source value, with its parameter: two
/// differences fit the same pattern only when the parameter is equal too (the same
/// power of ten, the same shift).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Pattern {
    /// One side NULL, the other `''` (`zero` false) or a zero number (`zero` true).
    NullVsEmpty {
        /// The NULL is in the target.
        null_in_target: bool,
        /// The other side is a zero, not an empty string.
        zero: bool,
    },
    /// Equal but for letter case.
    CaseOnly,
    /// Equal but for whitespace: at the ends only (`ends`), or inside too.
    WhitespaceOnly {
        /// Trimming both values makes them equal.
        ends: bool,
    },
    /// The target is the source rounded (or cut) to `digits` decimal places.
    Rounded {
        /// Decimal places the target keeps.
        digits: u32,
    },
    /// The target timestamp is the source's cut to `digits` fractional digits.
    TruncatedTime {
        /// Fractional second digits the target keeps.
        digits: usize,
    },
    /// target = source x 10^power.
    Scaled {
        /// The power of ten (never 0).
        power: i32,
    },
    /// target = source + `nanos` (timestamps).
    ShiftedTime {
        /// The shift in nanoseconds (never 0).
        nanos: i128,
    },
    /// target = source + `days` (dates).
    ShiftedDate {
        /// The shift in days (never 0).
        days: i64,
    },
    /// target = source + mantissa x 10^exponent (numbers).
    ShiftedNumber {
        /// The shift's digits, without trailing zeros (never 0).
        mantissa: i128,
        /// Its power of ten.
        exponent: i32,
    },
    /// The target text is a strict prefix of the source text.
    TruncatedText,
}

/// Every pattern `source` -> `target` fits (`None` = NULL).
pub(crate) fn patterns(source: Option<&str>, target: Option<&str>) -> Vec<Pattern> {
    let mut out = Vec::new();
    let (s, t) = match (source, target) {
        (Some(s), Some(t)) => (s, t),
        (None, Some(v)) | (Some(v), None) => {
            let zero = Decimal::parse(v).is_some_and(|d| d.mantissa == 0);
            if v.is_empty() || zero {
                out.push(Pattern::NullVsEmpty {
                    null_in_target: target.is_none(),
                    zero,
                });
            }
            return out;
        }
        (None, None) => return out,
    };
    if s == t {
        return out;
    }
    if s.to_lowercase() == t.to_lowercase() {
        out.push(Pattern::CaseOnly);
    }
    if s.trim() == t.trim() {
        out.push(Pattern::WhitespaceOnly { ends: true });
    } else if without_whitespace(s) == without_whitespace(t) {
        out.push(Pattern::WhitespaceOnly { ends: false });
    }
    if let (Some(a), Some(b)) = (Decimal::parse(s), Decimal::parse(t)) {
        out.extend(numeric(a, b, s, t));
    } else if let (Some(a), Some(b)) = (timestamp(s), timestamp(t)) {
        out.extend(
            cut_fraction(s, t)
                .into_iter()
                .map(|digits| Pattern::TruncatedTime { digits }),
        );
        let nanos = (b - a).num_nanoseconds().map(i128::from);
        if let Some(nanos) = nanos.filter(|n| *n != 0) {
            out.push(Pattern::ShiftedTime { nanos });
        }
    } else if let (Ok(a), Ok(b)) = (
        NaiveDate::parse_from_str(s, "%Y-%m-%d"),
        NaiveDate::parse_from_str(t, "%Y-%m-%d"),
    ) {
        out.push(Pattern::ShiftedDate {
            days: (b - a).num_days(),
        });
    }
    if t.len() < s.len() && s.starts_with(t) {
        out.push(Pattern::TruncatedText);
    }
    out
}

/// The patterns two numbers fit (`s`, `t` their texts).
fn numeric(a: Decimal, b: Decimal, s: &str, t: &str) -> Vec<Pattern> {
    let mut out = Vec::new();
    out.extend(
        rounded(&a, &b)
            .into_iter()
            .map(|digits| Pattern::Rounded { digits }),
    );
    if let (Ok(x), Ok(y)) = (s.parse::<f64>(), t.parse::<f64>())
        && x != 0.0
        && let ratio = y / x
        && ratio > 0.0
    {
        let power = ratio.log10().round();
        if power != 0.0 && power.abs() <= 12.0 && (ratio / 10f64.powf(power) - 1.0).abs() < 1e-9 {
            out.push(Pattern::Scaled {
                power: power as i32,
            });
        }
    }
    if let Some((mantissa, exponent)) = b.minus(&a).map(Decimal::normalised)
        && mantissa != 0
    {
        out.push(Pattern::ShiftedNumber { mantissa, exponent });
    }
    out
}

/// `s` with every whitespace character left out.
fn without_whitespace(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A timestamp as the findings show them (`2024-01-01T10:00:00.123`).
fn timestamp(s: &str) -> Option<NaiveDateTime> {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").ok()
}

/// The fractional digits `t` keeps when it is `s` with fractional digits cut off:
/// every count that fits, since the findings show `.120` as `.12`.
fn cut_fraction(s: &str, t: &str) -> Vec<usize> {
    let Some(rest) = s.strip_prefix(t) else {
        return Vec::new();
    };
    let kept = t.split_once('.').map_or(0, |(_, f)| f.len());
    let rest = if kept == 0 {
        rest.strip_prefix('.').unwrap_or("")
    } else {
        rest
    };
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return Vec::new();
    }
    // `t` padded with zeros to `kept + z` digits is still `s` cut there.
    let zeros = rest.bytes().take_while(|b| *b == b'0').count();
    (kept..=kept + zeros.min(rest.len() - 1)).collect()
}

/// The decimal places `b` keeps as `a` rounded (half away from zero or half to
/// even) or cut to fewer places: every count of places that fits, since a value
/// rounded to 2 places may show 1 (`1.2049` -> `1.20`, shown `1.2`).
fn rounded(a: &Decimal, b: &Decimal) -> Vec<u32> {
    let (a, b) = (a.trimmed(), b.trimmed());
    let mut out = Vec::new();
    for places in b.scale..a.scale {
        let (Some(div), Some(up_b)) = (
            10i128.checked_pow(a.scale - places),
            10i128.checked_pow(places - b.scale),
        ) else {
            break;
        };
        let Some(target) = b.mantissa.checked_mul(up_b) else {
            break;
        };
        let (q, r) = (a.mantissa / div, a.mantissa % div);
        let up = q + a.mantissa.signum();
        let half = (r.abs() * 2).cmp(&div);
        let half_even = if half.is_gt() || (half.is_eq() && q % 2 != 0) {
            up
        } else {
            q
        };
        if [q, if half.is_ge() { up } else { q }, half_even].contains(&target) {
            out.push(places);
        }
    }
    out
}

/// A decimal number: mantissa x 10^-scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    mantissa: i128,
    scale: u32,
}

impl Decimal {
    /// `-12.345`, `7`, `+0.5`; no exponent, at most 36 digits.
    fn parse(s: &str) -> Option<Decimal> {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let all = || int.bytes().chain(frac.bytes());
        if int.is_empty() || all().any(|b| !b.is_ascii_digit()) || int.len() + frac.len() > 36 {
            return None;
        }
        let m = all().fold(0i128, |m, b| m * 10 + i128::from(b - b'0'));
        Some(Decimal {
            mantissa: if s.starts_with('-') { -m } else { m },
            scale: frac.len() as u32,
        })
    }

    /// The same number without trailing fractional zeros.
    fn trimmed(self) -> Decimal {
        let mut d = self;
        while d.scale > 0 && d.mantissa % 10 == 0 {
            d.mantissa /= 10;
            d.scale -= 1;
        }
        d
    }

    /// `self - other`, exactly.
    fn minus(&self, other: &Decimal) -> Option<Decimal> {
        let scale = self.scale.max(other.scale);
        let at = |d: &Decimal| d.mantissa.checked_mul(10i128.checked_pow(scale - d.scale)?);
        Some(Decimal {
            mantissa: at(self)?.checked_sub(at(other)?)?,
            scale,
        })
    }

    /// (digits, power of ten) with no trailing zero in the digits.
    fn normalised(self) -> (i128, i32) {
        let (mut m, mut e) = (self.mantissa, -(self.scale as i32));
        while m != 0 && m % 10 == 0 {
            m /= 10;
            e += 1;
        }
        (m, e)
    }
}

/// `mantissa x 10^exponent` as plain decimal text (`-0.25`, `3600`).
pub(crate) fn decimal_text(mantissa: i128, exponent: i32) -> String {
    let digits = mantissa.unsigned_abs().to_string();
    let sign = if mantissa < 0 { "-" } else { "" };
    if exponent >= 0 {
        return format!("{sign}{digits}{}", "0".repeat(exponent as usize));
    }
    let places = (-exponent) as usize;
    let padded = format!("{digits:0>width$}", width = places + 1);
    let (int, frac) = padded.split_at(padded.len() - places);
    format!("{sign}{int}.{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(s: Option<&str>, t: Option<&str>) -> Vec<Pattern> {
        patterns(s, t)
    }

    #[test]
    fn numbers_scaled_shifted_and_rounded() {
        assert!(fits(Some("12.5"), Some("1250")).contains(&Pattern::Scaled { power: 2 }));
        assert!(
            fits(Some("0.1"), Some("10.000000000000002")).contains(&Pattern::Scaled { power: 2 })
        );
        assert!(fits(Some("4000"), Some("4")).contains(&Pattern::Scaled { power: -3 }));
        assert!(
            !fits(Some("-5"), Some("50"))
                .iter()
                .any(|p| matches!(p, Pattern::Scaled { .. }))
        );
        assert!(
            fits(Some("10.25"), Some("13.75")).contains(&Pattern::ShiftedNumber {
                mantissa: 35,
                exponent: -1
            })
        );
        assert!(fits(Some("12.345"), Some("12.35")).contains(&Pattern::Rounded { digits: 2 }));
        assert!(fits(Some("12.345"), Some("12.34")).contains(&Pattern::Rounded { digits: 2 }));
        assert!(fits(Some("-2.5"), Some("-3")).contains(&Pattern::Rounded { digits: 0 }));
        assert!(fits(Some("2.5"), Some("2")).contains(&Pattern::Rounded { digits: 0 }));
        let both = fits(Some("1.2049"), Some("1.2"));
        assert!(
            both.contains(&Pattern::Rounded { digits: 1 })
                && both.contains(&Pattern::Rounded { digits: 2 })
        );
        assert!(
            !fits(Some("12.345"), Some("12.40"))
                .iter()
                .any(|p| matches!(p, Pattern::Rounded { .. }))
        );
        assert!(
            !fits(Some("12.3"), Some("12.345"))
                .iter()
                .any(|p| matches!(p, Pattern::Rounded { .. }))
        );
    }

    #[test]
    fn timestamps_and_dates() {
        let s = "2024-03-01T10:15:00.123456";
        assert!(
            fits(Some(s), Some("2024-03-01T10:15:00.123"))
                .contains(&Pattern::TruncatedTime { digits: 3 })
        );
        assert!(
            fits(Some("2024-03-01T10:15:00.5"), Some("2024-03-01T10:15:00"))
                .contains(&Pattern::TruncatedTime { digits: 0 })
        );
        let shown = fits(
            Some("2024-03-01T10:15:00.120456"),
            Some("2024-03-01T10:15:00.12"),
        );
        assert!(
            shown.contains(&Pattern::TruncatedTime { digits: 2 })
                && shown.contains(&Pattern::TruncatedTime { digits: 3 })
        );
        assert!(!shown.contains(&Pattern::TruncatedTime { digits: 4 }));
        assert_eq!(
            fits(Some("2024-03-01T22:00:00"), Some("2024-03-02T00:00:00")),
            vec![Pattern::ShiftedTime {
                nanos: 7_200_000_000_000
            }]
        );
        assert_eq!(
            fits(Some("2024-03-01"), Some("2024-02-29")),
            vec![Pattern::ShiftedDate { days: -1 }]
        );
    }

    #[test]
    fn text_nulls_case_and_whitespace() {
        assert_eq!(
            fits(Some(""), None),
            vec![Pattern::NullVsEmpty {
                null_in_target: true,
                zero: false
            }]
        );
        assert_eq!(
            fits(None, Some("0.00")),
            vec![Pattern::NullVsEmpty {
                null_in_target: false,
                zero: true
            }]
        );
        assert!(fits(Some("x"), None).is_empty());
        assert_eq!(fits(Some("Ann"), Some("ANN")), vec![Pattern::CaseOnly]);
        assert_eq!(
            fits(Some("Ann  "), Some("Ann")),
            vec![
                Pattern::WhitespaceOnly { ends: true },
                Pattern::TruncatedText
            ]
        );
        assert_eq!(
            fits(Some("a  b"), Some("a b")),
            vec![Pattern::WhitespaceOnly { ends: false }]
        );
        assert_eq!(
            fits(Some("Lisbon"), Some("Lis")),
            vec![Pattern::TruncatedText]
        );
        assert!(fits(Some("Lisbon"), Some("Porto")).is_empty());
    }

    #[test]
    fn decimal_text_reads_back() {
        assert_eq!(decimal_text(35, -1), "3.5");
        assert_eq!(decimal_text(-25, -2), "-0.25");
        assert_eq!(decimal_text(36, 2), "3600");
        assert_eq!(decimal_text(5, -3), "0.005");
    }
}

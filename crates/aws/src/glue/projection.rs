//! Partition projection. A Glue table whose parameters say `projection.enabled = true`
//! has no registered partitions: Athena computes them from the `projection.<key>.*`
//! rules (enum, integer, date, injected) and the `storage.location.template`. This
//! module evaluates the same rules against what is on S3: [`Projection::prefixes`]
//! gives the prefixes to list (narrowed by the pair's partition filter and by the
//! requested partitions, never a date range enumerated into one request per value),
//! and [`Projection::partition_of`] reads the partition values from an object's path,
//! keeping only values the rules accept.

use std::collections::HashMap;

use chrono::format::{Parsed, StrftimeItems};
use chrono::{Duration, Months, NaiveDateTime, NaiveTime};

use recon_engine::error::{ReconError, Result};
use recon_engine::partition_filter::Filter;
use recon_engine::table::{s3_form, url_decode};

/// Values of one key enumerated at most to narrow a listing; a key with more values is
/// listed under the prefix before it.
const MAX_ENUMERATED: u64 = 10_000;
/// Prefixes listed at most for one table; a narrowing that would list more stops at
/// the key before.
pub(crate) const MAX_PREFIX_LISTS: usize = 64;

/// A partition's `(key, value)` pairs as the filter evaluates them.
type Known = recon_engine::table::PartitionValues;

/// A table's partition projection: the rule of each partition key and the template
/// of a partition's location.
#[derive(Debug)]
pub(crate) struct Projection {
    /// The partition keys, in the table's order, lower-case.
    keys: Vec<String>,
    /// The rule of each key, in the order of `keys`.
    rules: Vec<Rule>,
    /// The location template, split at its `${key}` placeholders.
    template: Vec<Part>,
    /// The template is the Hive default (`location/k=${k}/`), whose values are
    /// percent-encoded in paths.
    hive: bool,
}

/// A piece of the location template.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    /// The placeholder of the key at this index.
    Key(usize),
}

/// The values a key may take.
#[derive(Debug)]
enum Rule {
    /// One of these values, exactly as written (white space included).
    Enum(Vec<String>),
    /// `min, min + interval, ... <= max`, zero-padded to `digits` when set.
    Integer {
        min: i64,
        max: i64,
        interval: i64,
        digits: Option<usize>,
    },
    /// Dates or times in `format` within the range.
    Date(DateRule),
    /// Any value (Athena takes it from the query).
    Injected,
}

/// A date key: its format (as chrono writes it) and its range.
#[derive(Debug)]
struct DateRule {
    format: String,
    start: NaiveDateTime,
    end: NaiveDateTime,
    interval: i64,
    unit: Unit,
    /// The `/` in a formatted value (`yyyy/MM/dd` spans three folders).
    slashes: usize,
}

/// A date interval's unit (`projection.<key>.interval.unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Milliseconds,
    Seconds,
    Minutes,
    Hours,
    Days,
    Weeks,
    Months,
    Years,
}

impl Unit {
    fn parse(word: &str) -> Option<Unit> {
        let w = word.trim().to_ascii_uppercase();
        let w = w.strip_suffix('S').unwrap_or(&w);
        Some(match w {
            "YEAR" => Unit::Years,
            "MONTH" => Unit::Months,
            "WEEK" => Unit::Weeks,
            "DAY" => Unit::Days,
            "HOUR" => Unit::Hours,
            "MINUTE" => Unit::Minutes,
            "SECOND" => Unit::Seconds,
            "MILLISECOND" => Unit::Milliseconds,
            _ => return None,
        })
    }

    /// `t` moved by `n` of this unit; `None` past chrono's range.
    fn add(self, t: NaiveDateTime, n: i64) -> Option<NaiveDateTime> {
        let months = |m: i64| {
            let m = u32::try_from(m.unsigned_abs()).ok()?;
            if n >= 0 {
                t.checked_add_months(Months::new(m))
            } else {
                t.checked_sub_months(Months::new(m))
            }
        };
        let fixed = |d: Duration| t.checked_add_signed(d);
        match self {
            Unit::Years => months(n.checked_mul(12)?),
            Unit::Months => months(n),
            Unit::Weeks => fixed(Duration::try_weeks(n)?),
            Unit::Days => fixed(Duration::try_days(n)?),
            Unit::Hours => fixed(Duration::try_hours(n)?),
            Unit::Minutes => fixed(Duration::try_minutes(n)?),
            Unit::Seconds => fixed(Duration::try_seconds(n)?),
            Unit::Milliseconds => fixed(Duration::try_milliseconds(n)?),
        }
    }
}

/// The table parameters, by lower-case name.
struct Params<'a> {
    table: &'a str,
    values: HashMap<String, &'a str>,
}

impl Params<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).copied()
    }

    fn required(&self, name: &str, what: &str) -> Result<&str> {
        self.get(name)
            .ok_or_else(|| self.bad(name, &format!("is missing; set it to {what}")))
    }

    fn bad(&self, name: &str, what: &str) -> ReconError {
        ReconError::InvalidInput(format!(
            "{}: partition projection: the table parameter `{name}` {what}",
            self.table
        ))
    }

    fn integer(&self, name: &str, default: i64) -> Result<i64> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| self.bad(name, &format!("is `{v}`; use a positive integer"))),
        }
    }
}

impl Projection {
    /// The projection of a table (`table` names it in errors) with these parameters,
    /// partition keys (lower-case) and location, or `None` when the table does not
    /// enable projection. `now` is what `NOW` in a date range means.
    pub(crate) fn from_table(
        parameters: Option<&HashMap<String, String>>,
        keys: &[String],
        location: &str,
        table: &str,
        now: NaiveDateTime,
    ) -> Result<Option<Projection>> {
        let params = Params {
            table,
            values: parameters
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str()))
                .collect(),
        };
        let enabled = params
            .get("projection.enabled")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if !enabled || keys.is_empty() {
            return Ok(None);
        }
        let rules = keys
            .iter()
            .map(|k| Rule::from_params(&params, k, now))
            .collect::<Result<Vec<_>>>()?;
        let (template, hive) = match params.get("storage.location.template") {
            Some(t) => (parse_template(t, keys, &params)?, false),
            None => {
                let mut t = location.trim_end_matches('/').to_string();
                for k in keys {
                    t.push_str(&format!("/{k}=${{{k}}}"));
                }
                t.push('/');
                (parse_template(&t, keys, &params)?, true)
            }
        };
        Ok(Some(Projection {
            keys: keys.to_vec(),
            rules,
            template,
            hive,
        }))
    }

    /// The partition keys, in the table's order.
    pub(crate) fn keys(&self) -> &[String] {
        &self.keys
    }

    /// Whether `key` (lower-case) is a partition key.
    pub(crate) fn has_key(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k == key)
    }

    /// The values of a requested partition label (`dt=2024/01/05/region=eu`) when it
    /// names exactly this table's keys, in their order, with values the rules accept.
    pub(crate) fn label_values(&self, label: &str) -> Option<Known> {
        let mut rest = label;
        let mut out = Vec::new();
        for (i, key) in self.keys.iter().enumerate() {
            rest = rest.strip_prefix(key.as_str())?.strip_prefix('=')?;
            let end = match self.keys.get(i + 1) {
                Some(next) => rest.find(&format!("/{next}="))?,
                None => rest.len(),
            };
            let value = &rest[..end];
            if !self.rules[i].accepts(value) {
                return None;
            }
            out.push((key.clone(), Some(value.to_string())));
            rest = rest[end..].strip_prefix('/').unwrap_or(&rest[end..]);
        }
        Some(out)
    }

    /// The folders to list for the partitions that `filter` and `requested` allow.
    /// Keys are expanded into their values, in template order, while each expansion
    /// leaves out some value and the prefixes stay within [`MAX_PREFIX_LISTS`]; a
    /// key whose values cannot be enumerated (injected, or a range of more than
    /// [`MAX_ENUMERATED`]) ends the expansion. Without a narrowing the one folder
    /// before the first key is listed. No prefix: no partition can match.
    pub(crate) fn prefixes(
        &self,
        filter: Option<&Filter>,
        requested: Option<&[Known]>,
    ) -> Vec<String> {
        let mut states: Vec<(String, Known)> = vec![(String::new(), Vec::new())];
        // The prefixes after the last key that left a value out (and the literal
        // after it): keys expanded past it would only multiply the listings.
        let mut best: Option<Vec<(String, Known)>> = None;
        let mut last_pruned = false;
        'walk: for part in &self.template {
            let k = match part {
                Part::Literal(l) => {
                    states.iter_mut().for_each(|(text, _)| text.push_str(l));
                    continue;
                }
                Part::Key(k) => *k,
            };
            if last_pruned {
                best = Some(states.clone());
            }
            let candidates = match requested {
                Some(parts) => {
                    let mut values: Vec<String> = parts
                        .iter()
                        .filter_map(|p| p.get(k).and_then(|(_, v)| v.clone()))
                        .collect();
                    values.sort();
                    values.dedup();
                    values
                }
                None => match self.rules[k].enumerate() {
                    Some(values) => values,
                    None => break,
                },
            };
            if self.hive && !candidates.iter().all(|v| is_plain(v)) {
                break;
            }
            let mut next = Vec::new();
            // Requested partitions name their values: a narrowing by themselves.
            let mut pruned = requested.is_some();
            for (text, known) in &states {
                for v in &candidates {
                    let mut known = known.clone();
                    known.push((self.keys[k].clone(), Some(v.clone())));
                    let wanted = requested.is_none_or(|parts| {
                        parts.iter().any(|p| known.iter().all(|kv| p.contains(kv)))
                    }) && filter.is_none_or(|f| f.may_match(&known));
                    if !wanted {
                        pruned = true;
                        continue;
                    }
                    if next.len() == MAX_PREFIX_LISTS {
                        break 'walk;
                    }
                    next.push((format!("{text}{v}"), known));
                }
            }
            last_pruned = pruned;
            states = next;
        }
        if last_pruned {
            best = Some(states);
        }
        let folder = |text: &str| match text.rfind('/') {
            Some(i) => text[..=i].to_string(),
            None => text.to_string(),
        };
        let Some(states) = best else {
            let root = match self.template.first() {
                Some(Part::Literal(l)) => l.as_str(),
                _ => "",
            };
            return vec![folder(root)];
        };
        let mut out: Vec<String> = states.iter().map(|(text, _)| folder(text)).collect();
        out.sort();
        out.dedup();
        // A folder within another listed folder is listed with it.
        let mut kept: Vec<String> = Vec::new();
        for p in out {
            if !kept.last().is_some_and(|k| p.starts_with(k.as_str())) {
                kept.push(p);
            }
        }
        kept
    }

    /// The partition an object at `uri` lies in: each key's value and the length of
    /// the partition's prefix of `uri`. `None` when the path does not fit the template
    /// or gives a value the rules do not accept (Athena does not see such a file).
    pub(crate) fn partition_of(&self, uri: &str) -> Option<(Known, usize)> {
        let mut values = vec![None; self.keys.len()];
        let end = self.match_from(0, uri, 0, &mut values)?;
        let known = self.keys.iter().cloned().zip(values).collect();
        Some((known, end))
    }

    /// Match template parts from `part` against `uri` from byte `at`; the end of the
    /// match (a folder boundary) when the rest fits.
    fn match_from(
        &self,
        part: usize,
        uri: &str,
        at: usize,
        values: &mut Vec<Option<String>>,
    ) -> Option<usize> {
        let Some(p) = self.template.get(part) else {
            let at_folder = uri[..at].ends_with('/') || uri[at..].starts_with('/');
            return (at_folder && at < uri.len()).then_some(at);
        };
        let rest = &uri[at..];
        match p {
            Part::Literal(l) => {
                if !rest.starts_with(l.as_str()) {
                    return None;
                }
                self.match_from(part + 1, uri, at + l.len(), values)
            }
            Part::Key(k) => {
                let slashes = self.rules[*k].slashes();
                let next = match self.template.get(part + 1) {
                    Some(Part::Literal(l)) => Some(l.as_str()),
                    _ => None,
                };
                let mut seen = 0;
                for (i, c) in rest.char_indices() {
                    if c == '/' {
                        seen += 1;
                        if seen > slashes {
                            break;
                        }
                        continue;
                    }
                    let end = i + c.len_utf8();
                    if seen != slashes || next.is_some_and(|l| !rest[end..].starts_with(l)) {
                        continue;
                    }
                    let raw = &rest[..end];
                    let value = if self.hive {
                        url_decode(raw)
                    } else {
                        raw.to_string()
                    };
                    if !self.rules[*k].accepts(&value) {
                        continue;
                    }
                    if let Some(done) = self.match_from(part + 1, uri, at + end, values) {
                        values[*k] = Some(value);
                        return Some(done);
                    }
                }
                None
            }
        }
    }
}

/// A value that Hive writes into a path as it is.
fn is_plain(v: &str) -> bool {
    v.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Split a location template at its `${key}` placeholders; each partition key must
/// appear exactly once, and the template must be on S3.
fn parse_template(text: &str, keys: &[String], params: &Params<'_>) -> Result<Vec<Part>> {
    const NAME: &str = "storage.location.template";
    let mut parts = Vec::new();
    let mut rest = text.trim();
    let mut seen = vec![false; keys.len()];
    while let Some(start) = rest.find("${") {
        if start > 0 {
            parts.push(Part::Literal(rest[..start].to_string()));
        }
        let close = rest[start..]
            .find('}')
            .ok_or_else(|| params.bad(NAME, &format!("is `{text}`, whose `${{` is not closed")))?;
        let name = rest[start + 2..start + close].trim().to_ascii_lowercase();
        let k = keys.iter().position(|k| *k == name).ok_or_else(|| {
            params.bad(
                NAME,
                &format!(
                    "names `${{{name}}}`, which is not a partition key (the keys: {})",
                    keys.join(", ")
                ),
            )
        })?;
        if std::mem::replace(&mut seen[k], true) {
            return Err(params.bad(
                NAME,
                &format!("names `${{{name}}}` twice; name each key once"),
            ));
        }
        parts.push(Part::Key(k));
        rest = &rest[start + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest.to_string()));
    }
    if let Some(k) = seen.iter().position(|s| !s) {
        return Err(params.bad(
            NAME,
            &format!(
                "does not name the partition key `${{{}}}`; name every key",
                keys[k]
            ),
        ));
    }
    match parts.first_mut() {
        Some(Part::Literal(root)) => match s3_form(root) {
            Some(s3) => *root = s3,
            None => {
                return Err(params.bad(NAME, &format!("is `{text}`, which is not on S3 (s3://)")));
            }
        },
        _ => {
            return Err(params.bad(
                NAME,
                &format!("is `{text}`; it must start with s3://bucket/"),
            ));
        }
    }
    Ok(parts)
}

impl Rule {
    fn from_params(params: &Params<'_>, key: &str, now: NaiveDateTime) -> Result<Rule> {
        let name = |p: &str| format!("projection.{key}.{p}");
        let kind = params.required(&name("type"), "enum, integer, date or injected")?;
        match kind.trim().to_ascii_lowercase().as_str() {
            "enum" => {
                let values = params.required(&name("values"), "the comma-separated values")?;
                Ok(Rule::Enum(values.split(',').map(str::to_string).collect()))
            }
            "integer" => {
                let range_name = name("range");
                let range = params.required(&range_name, "`min,max`")?;
                let bounds: Vec<Option<i64>> =
                    range.split(',').map(|b| b.trim().parse().ok()).collect();
                let [Some(min), Some(max)] = bounds[..] else {
                    return Err(params.bad(
                        &range_name,
                        &format!("is `{range}`; use `min,max`, two integers"),
                    ));
                };
                let digits = match params.get(&name("digits")) {
                    None => None,
                    Some(_) => Some(params.integer(&name("digits"), 1)? as usize),
                };
                Ok(Rule::Integer {
                    min,
                    max,
                    interval: params.integer(&name("interval"), 1)?,
                    digits,
                })
            }
            "date" => DateRule::from_params(params, key, now).map(Rule::Date),
            "injected" => Ok(Rule::Injected),
            other => Err(params.bad(
                &name("type"),
                &format!("is `{other}`; use enum, integer, date or injected"),
            )),
        }
    }

    /// Whether `value` is one of this key's values.
    fn accepts(&self, value: &str) -> bool {
        match self {
            Rule::Enum(values) => values.iter().any(|v| v == value),
            Rule::Integer {
                min,
                max,
                interval,
                digits,
            } => value.parse::<i64>().is_ok_and(|n| {
                (*min..=*max).contains(&n)
                    && (n - min) % interval == 0
                    && integer_text(n, *digits) == value
            }),
            Rule::Date(d) => d
                .parse(value)
                .is_some_and(|t| t >= d.start && t <= d.end && d.write(t) == value),
            Rule::Injected => !value.is_empty(),
        }
    }

    /// Every value, in order, or `None` when there are more than [`MAX_ENUMERATED`] or
    /// they cannot be known (injected).
    fn enumerate(&self) -> Option<Vec<String>> {
        match self {
            Rule::Enum(values) => Some(values.clone()),
            Rule::Integer {
                min,
                max,
                interval,
                digits,
            } => {
                let count = (*max as i128 - *min as i128) / *interval as i128 + 1;
                if count > MAX_ENUMERATED as i128 {
                    return None;
                }
                let count = count.max(0) as i64;
                Some(
                    (0..count)
                        .map(|i| integer_text(min + i * interval, *digits))
                        .collect(),
                )
            }
            Rule::Date(d) => d.enumerate(),
            Rule::Injected => None,
        }
    }

    /// The `/` a value of this key holds.
    fn slashes(&self) -> usize {
        match self {
            Rule::Date(d) => d.slashes,
            _ => 0,
        }
    }
}

/// `n` as an integer key writes it: zero-padded to `digits` when set.
fn integer_text(n: i64, digits: Option<usize>) -> String {
    match digits {
        Some(width) if n < 0 => format!("-{:0width$}", n.unsigned_abs()),
        Some(width) => format!("{n:0width$}"),
        None => n.to_string(),
    }
}

impl DateRule {
    fn from_params(params: &Params<'_>, key: &str, now: NaiveDateTime) -> Result<DateRule> {
        let name = |p: &str| format!("projection.{key}.{p}");
        let format_name = name("format");
        let java = params.required(&format_name, "a date format such as yyyy-MM-dd")?;
        let (format, finest) = chrono_format(java)
            .map_err(|why| params.bad(&format_name, &format!("is `{java}`: {why}")))?;
        let unit = match params.get(&name("interval.unit")) {
            None => finest,
            Some(u) => Unit::parse(u).ok_or_else(|| {
                params.bad(
                    &name("interval.unit"),
                    &format!("is `{u}`; use YEARS, MONTHS, WEEKS, DAYS, HOURS, MINUTES, SECONDS or MILLISECONDS"),
                )
            })?,
        };
        let mut rule = DateRule {
            slashes: format.matches('/').count(),
            format,
            start: NaiveDateTime::MIN,
            end: NaiveDateTime::MAX,
            interval: params.integer(&name("interval"), 1)?,
            unit,
        };
        let range_name = name("range");
        let range = params.required(
            &range_name,
            "`start,end` (dates in the format, or NOW-3YEARS)",
        )?;
        let bounds: Vec<&str> = range.split(',').collect();
        let [start, end] = bounds[..] else {
            return Err(params.bad(&range_name, &format!("is `{range}`; use `start,end`")));
        };
        let bound = |text: &str| {
            rule.bound(text, now).ok_or_else(|| {
                params.bad(
                    &range_name,
                    &format!(
                        "is `{range}`: `{}` is neither a date in the format `{java}` nor NOW, NOW-N UNITS or NOW+N UNITS",
                        text.trim()
                    ),
                )
            })
        };
        let (start, end) = (bound(start)?, bound(end)?);
        rule.start = start;
        rule.end = end;
        Ok(rule)
    }

    /// A range bound: a date in the format, or `NOW` moved by `N UNITS`, cut to the
    /// format's precision.
    fn bound(&self, text: &str, now: NaiveDateTime) -> Option<NaiveDateTime> {
        let t = text.trim();
        let Some(offset) = t.strip_prefix("NOW").or_else(|| t.strip_prefix("now")) else {
            return self.parse(t);
        };
        let offset: String = offset.chars().filter(|c| !c.is_whitespace()).collect();
        let moved = if offset.is_empty() {
            now
        } else {
            let (sign, rest) = match offset.split_at(1) {
                ("+", rest) => (1, rest),
                ("-", rest) => (-1, rest),
                _ => return None,
            };
            let digits = rest.find(|c: char| !c.is_ascii_digit())?;
            let n: i64 = rest[..digits].parse().ok()?;
            Unit::parse(&rest[digits..])?.add(now, sign * n)?
        };
        self.parse(&self.write(moved))
    }

    /// `text` read in the format; fields the format lacks are the start of the period.
    fn parse(&self, text: &str) -> Option<NaiveDateTime> {
        let mut parsed = Parsed::new();
        chrono::format::parse(&mut parsed, text, StrftimeItems::new(&self.format)).ok()?;
        if parsed.month().is_none() {
            parsed.set_month(1).ok()?;
        }
        if parsed.day().is_none() {
            parsed.set_day(1).ok()?;
        }
        let date = parsed.to_naive_date().ok()?;
        let time = if parsed.hour_div_12().is_none() {
            NaiveTime::MIN
        } else {
            if parsed.minute().is_none() {
                parsed.set_minute(0).ok()?;
            }
            parsed.to_naive_time().ok()?
        };
        Some(date.and_time(time))
    }

    fn write(&self, t: NaiveDateTime) -> String {
        t.format(&self.format).to_string()
    }

    /// The values from start to end by the interval, or `None` past [`MAX_ENUMERATED`].
    fn enumerate(&self) -> Option<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        let mut t = self.start;
        let mut steps: u64 = 0;
        while t <= self.end {
            steps += 1;
            if steps > MAX_ENUMERATED {
                return None;
            }
            let text = self.write(t);
            if out.last() != Some(&text) {
                out.push(text);
            }
            t = self
                .unit
                .add(self.start, self.interval.checked_mul(steps as i64)?)?;
        }
        Some(out)
    }
}

/// A Java date format (`yyyy-MM-dd`, `yyyy/MM/dd/HH`, `yyyyMMdd'T'HH`) as a chrono
/// format, with the finest unit it writes (the interval's default unit).
fn chrono_format(java: &str) -> std::result::Result<(String, Unit), String> {
    let chars: Vec<char> = java.chars().collect();
    let mut out = String::new();
    let mut finest = Unit::Years;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            let close = chars[i + 1..]
                .iter()
                .position(|&q| q == '\'')
                .ok_or("a quote (') is not closed")?;
            let quoted: String = chars[i + 1..i + 1 + close].iter().collect();
            out.push_str(if quoted.is_empty() { "'" } else { &quoted });
            i += close + 2;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        i += run;
        let (spec, unit) = match (c, run) {
            ('y' | 'u', 2) => ("%y", Unit::Years),
            ('y' | 'u', _) => ("%Y", Unit::Years),
            ('M', 1) => ("%-m", Unit::Months),
            ('M', 2) => ("%m", Unit::Months),
            ('M', 3) => ("%b", Unit::Months),
            ('M', _) => ("%B", Unit::Months),
            ('d', 1) => ("%-d", Unit::Days),
            ('d', _) => ("%d", Unit::Days),
            ('H', 1) => ("%-H", Unit::Hours),
            ('H', _) => ("%H", Unit::Hours),
            ('m', 1) => ("%-M", Unit::Minutes),
            ('m', _) => ("%M", Unit::Minutes),
            ('s', 1) => ("%-S", Unit::Seconds),
            ('s', _) => ("%S", Unit::Seconds),
            ('S', 3) => ("%3f", Unit::Milliseconds),
            (c, _) if c.is_ascii_alphabetic() => {
                return Err(format!(
                    "the pattern letter `{c}` is not supported; use y, M, d, H, m, s and SSS"
                ));
            }
            (c, _) => {
                for _ in 0..run {
                    if c == '%' {
                        out.push_str("%%");
                    } else {
                        out.push(c);
                    }
                }
                continue;
            }
        };
        out.push_str(spec);
        finest = finest.min(unit);
    }
    Ok((out, finest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> NaiveDateTime {
        chrono::NaiveDate::from_ymd_opt(2024, 1, 10)
            .unwrap()
            .and_hms_opt(13, 30, 0)
            .unwrap()
    }

    fn projection(params: &[(&str, &str)], keys: &[&str]) -> Result<Option<Projection>> {
        let params: HashMap<String, String> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        Projection::from_table(Some(&params), &keys, "s3://b/t/", "glue://d/t", now())
    }

    fn region_day() -> Projection {
        projection(
            &[
                ("projection.enabled", "true"),
                ("projection.region.type", "enum"),
                ("projection.region.values", "eu,us,ap"),
                ("projection.dt.type", "date"),
                ("projection.dt.format", "yyyy/MM/dd"),
                ("projection.dt.range", "2024/01/01,NOW"),
                ("storage.location.template", "s3a://b/data/${region}/${dt}/"),
            ],
            &["region", "dt"],
        )
        .unwrap()
        .unwrap()
    }

    fn known(pairs: &[(&str, &str)]) -> Known {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect()
    }

    #[test]
    fn paths_give_the_values_the_rules_accept() {
        let p = region_day();
        let (values, end) = p
            .partition_of("s3://b/data/eu/2024/01/05/part-0.parquet")
            .unwrap();
        assert_eq!(values, known(&[("region", "eu"), ("dt", "2024/01/05")]));
        assert_eq!(end, "s3://b/data/eu/2024/01/05/".len());
        // Outside the enum, the range (after NOW) or the format: not in the table.
        for uri in [
            "s3://b/data/sa/2024/01/05/part-0.parquet",
            "s3://b/data/eu/2024/01/11/part-0.parquet",
            "s3://b/data/eu/2023/12/31/part-0.parquet",
            "s3://b/data/eu/2024/1/05/part-0.parquet",
            "s3://b/data/eu/2024/01/05",
        ] {
            assert!(p.partition_of(uri).is_none(), "{uri}");
        }
    }

    #[test]
    fn a_filter_narrows_the_listing_to_the_prefixes_it_allows() {
        let p = region_day();
        assert_eq!(p.prefixes(None, None), vec!["s3://b/data/"]);
        let f = Filter::parse("region = 'eu' AND dt >= '2024/01/08'").unwrap();
        assert_eq!(
            p.prefixes(Some(&f), None),
            vec![
                "s3://b/data/eu/2024/01/08/",
                "s3://b/data/eu/2024/01/09/",
                "s3://b/data/eu/2024/01/10/"
            ]
        );
        // A filter that leaves every value in lists the root once; one that
        // leaves too many stops at the key before.
        let all = Filter::parse("dt >= '2000/01/01'").unwrap();
        assert_eq!(p.prefixes(Some(&all), None), vec!["s3://b/data/"]);
        let wide = Filter::parse("region <> 'ap'").unwrap();
        assert_eq!(
            p.prefixes(Some(&wide), None),
            vec!["s3://b/data/eu/", "s3://b/data/us/"]
        );
        let none = Filter::parse("region = 'sa'").unwrap();
        assert!(p.prefixes(Some(&none), None).is_empty());
    }

    #[test]
    fn requested_labels_list_their_own_folders() {
        let p = region_day();
        let a = p.label_values("region=us/dt=2024/01/02").unwrap();
        assert_eq!(a, known(&[("region", "us"), ("dt", "2024/01/02")]));
        assert!(p.label_values("region=sa/dt=2024/01/02").is_none());
        assert!(p.label_values("dt=2024/01/02/region=us").is_none());
        let b = p.label_values("region=eu/dt=2024/01/03").unwrap();
        assert_eq!(
            p.prefixes(None, Some(&[a, b])),
            vec!["s3://b/data/eu/2024/01/03/", "s3://b/data/us/2024/01/02/"]
        );
    }

    #[test]
    fn the_hive_default_template_and_integer_keys() {
        let p = projection(
            &[
                ("projection.enabled", "TRUE"),
                ("projection.hour.type", "integer"),
                ("projection.hour.range", "0,23"),
                ("projection.hour.digits", "2"),
                ("projection.src.type", "injected"),
            ],
            &["hour", "src"],
        )
        .unwrap()
        .unwrap();
        let (values, _) = p
            .partition_of("s3://b/t/hour=07/src=a%2Fb/f.parquet")
            .unwrap();
        assert_eq!(values, known(&[("hour", "07"), ("src", "a/b")]));
        assert!(p.partition_of("s3://b/t/hour=7/src=a/f.parquet").is_none());
        assert!(p.partition_of("s3://b/t/hour=24/src=a/f.parquet").is_none());
        let f = Filter::parse("hour BETWEEN 3 AND 4").unwrap();
        assert_eq!(
            p.prefixes(Some(&f), None),
            vec!["s3://b/t/hour=03/", "s3://b/t/hour=04/"]
        );
    }

    #[test]
    fn a_date_range_too_long_to_enumerate_is_listed_not_enumerated() {
        let p = projection(
            &[
                ("projection.enabled", "true"),
                ("projection.ts.type", "date"),
                ("projection.ts.format", "yyyy-MM-dd-HH-mm"),
                ("projection.ts.range", "NOW-3YEARS,NOW"),
            ],
            &["ts"],
        )
        .unwrap()
        .unwrap();
        let f = Filter::parse("ts = '2024-01-10-13-00'").unwrap();
        assert_eq!(p.prefixes(Some(&f), None), vec!["s3://b/t/"]);
        assert!(
            p.partition_of("s3://b/t/ts=2024-01-10-13-00/f.parquet")
                .is_some()
        );
        assert!(
            p.partition_of("s3://b/t/ts=2021-01-10-13-29/f.parquet")
                .is_none()
        );
    }

    #[test]
    fn bad_parameters_name_the_parameter() {
        let msg = |params: &[(&str, &str)]| {
            let mut all = vec![("projection.enabled", "true")];
            all.extend_from_slice(params);
            projection(&all, &["dt"]).unwrap_err().to_string()
        };
        let m = msg(&[]);
        assert!(
            m.contains("glue://d/t") && m.contains("`projection.dt.type` is missing"),
            "{m}"
        );
        let m = msg(&[("projection.dt.type", "range")]);
        assert!(
            m.contains("`range`; use enum, integer, date or injected"),
            "{m}"
        );
        let m = msg(&[
            ("projection.dt.type", "date"),
            ("projection.dt.format", "yyyy-MM-dd"),
            ("projection.dt.range", "2024-01-01,LATER"),
        ]);
        assert!(
            m.contains("projection.dt.range") && m.contains("`LATER`"),
            "{m}"
        );
        let m = msg(&[
            ("projection.dt.type", "date"),
            ("projection.dt.format", "yyyy-ww"),
            ("projection.dt.range", "2024-01,NOW"),
        ]);
        assert!(m.contains("letter `w`"), "{m}");
        let m = msg(&[
            ("projection.dt.type", "injected"),
            ("storage.location.template", "s3://b/t/${day}/"),
        ]);
        assert!(m.contains("`${day}`, which is not a partition key"), "{m}");
        // Projection off: the table's registered partitions count.
        assert!(
            projection(&[("projection.enabled", "false")], &["dt"])
                .unwrap()
                .is_none()
        );
    }
}

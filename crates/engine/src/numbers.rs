//! Counts as people read them: `1,234,567`, `1 partition`, `2 partitions`.

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 partition`, `2 partitions`, with separators.
pub fn count(n: usize, what: &str) -> String {
    format!(
        "{} {what}{}",
        thousands(n as u64),
        if n == 1 { "" } else { "s" }
    )
}

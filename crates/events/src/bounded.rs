//! Bounds on what goes through size-limited channels: a Step Functions state, task
//! result or child input holds at most 256 KiB, an SNS message at most 256 KB, and a
//! failure's `Cause` ends up in an alert. Texts are cut on a character boundary, so
//! what is kept is still valid UTF-8.

/// Step Functions' limit on a state's input or output, a task's result and a
/// Distributed Map child's input.
pub const STEP_FUNCTIONS_PAYLOAD_MAX: usize = 256 * 1024;

/// The longest alert message sent (SNS takes 256 KB; an e-mail past a few pages is
/// not read). The reports hold everything an alert leaves out.
pub const ALERT_MESSAGE_MAX: usize = 32 * 1024;

/// The longest error message a function returns: it is a failed state's `Cause`,
/// which the failure alert quotes.
pub const ERROR_MESSAGE_MAX: usize = 4 * 1024;

/// The longest prefix of `text` of at most `max` bytes that ends on a character
/// boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut to at most `max` bytes, ending in `...` when cut.
pub fn shortened(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{}...", prefix(text, max.saturating_sub(3)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(prefix("abc", 5), "abc");
        // "é" is two bytes: a cut inside it keeps the character out.
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("aé", 3), "aé");
        assert_eq!(shortened("abcdef", 5), "ab...");
        assert_eq!(shortened("ééé", 6), "ééé");
        let s = shortened(&"é".repeat(100), 11);
        assert!(s.len() <= 11 && s.ends_with("..."), "{s}");
    }
}

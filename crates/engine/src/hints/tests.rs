use super::*;

/// `HintKind::as_str` is the name report.json uses.
#[test]
fn kind_names_are_the_serialised_names() {
    for kind in HintKind::ALL {
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
    }
}

#[test]
fn shifts_read_as_hours_minutes_and_seconds() {
    assert_eq!(shift_text(7_200_000_000_000), "+2h");
    assert_eq!(shift_text(-19_800_000_000_000), "-5h 30m");
    assert_eq!(shift_text(1_500_000_000), "+1.5s");
}

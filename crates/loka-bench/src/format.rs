//! The one way rates and counts are written for people: 3 significant digits with a k/M/G suffix
//! (`15.4M`), in the report, its charts and every table `loka bench` prints. Records and JSON
//! output keep the raw numbers.

/// `v` in 3 significant digits with a k (10³), M (10⁶) or G (10⁹) suffix: `15357161.0` →
/// `15.4M`, `812.0` → `812`, `0.5` → `0.500`; `—` for NaN.
pub fn human(v: f64) -> String {
    if v.is_nan() {
        return "—".into();
    }
    // Rounded to 3 significant digits first, so that 999,950 is `1.00M`, not `1000k`.
    let v = if v == 0.0 || !v.is_finite() {
        v
    } else {
        let step = 10f64.powi(v.abs().log10().floor() as i32 - 2);
        (v / step).round() * step
    };
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = scaled.abs();
    let digits = if s >= 100.0 || s == 0.0 {
        0
    } else if s >= 10.0 {
        1
    } else if s >= 1.0 {
        2
    } else {
        3
    };
    format!("{scaled:.digits$}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn three_significant_digits_with_a_suffix() {
        assert_eq!(human(15_357_161.0), "15.4M");
        assert_eq!(human(10_500_000.0), "10.5M");
        assert_eq!(human(32_472_304.0), "32.5M");
        assert_eq!(human(1_520.0), "1.52k");
        assert_eq!(human(250.0), "250");
        assert_eq!(human(0.5), "0.500");
        assert_eq!(human(2.5e9), "2.50G");
        assert_eq!(human(999_950.0), "1.00M");
        assert_eq!(human(999.7), "1.00k");
        assert_eq!(human(0.0), "0");
        assert_eq!(human(-2_340.0), "-2.34k");
        assert_eq!(human(f64::NAN), "—");
    }
}

//! A minimal hand-written SVG line chart (no plotting dependency).

use std::fmt::Write as _;

/// One line of the chart.
pub struct Series {
    /// Legend text.
    pub name: String,
    /// CSS colour.
    pub color: &'static str,
    /// Points `(x, y)`, drawn in order.
    pub points: Vec<(f64, f64)>,
}

/// A vertical dashed marker (e.g. an estimate).
pub struct Marker {
    /// Position on the x axis.
    pub x: f64,
    /// Label next to the line.
    pub label: String,
    /// CSS colour.
    pub color: &'static str,
}

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 56.0;

/// Escapes text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" tick step for `range` with about `target` ticks.
fn tick_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    (nice * mag).max(1.0)
}

/// Renders a line chart with axes from 0 to the data maxima.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    markers: &[Marker],
) -> String {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let x_max = pts
        .clone()
        .map(|p| p.0)
        .chain(markers.iter().map(|m| m.x))
        .fold(1.0f64, f64::max);
    let y_max = pts.map(|p| p.1).fold(1.0f64, f64::max);
    let (x_step, y_step) = (tick_step(x_max, 10.0), tick_step(y_max, 8.0));
    let x_max = (x_max / x_step).ceil() * x_step;
    let y_max = (y_max / y_step).ceil() * y_step;
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let sx = |x: f64| LEFT + x / x_max * pw;
    let sy = |y: f64| TOP + ph - y / y_max * ph;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        W / 2.0,
        esc(title)
    );
    // Grid and ticks.
    let mut x = 0.0;
    while x <= x_max + 1e-9 {
        let px = sx(x);
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{x}</text>"##,
            TOP + ph,
            TOP + ph + 16.0
        );
        x += x_step;
    }
    let mut y = 0.0;
    while y <= y_max + 1e-9 {
        let py = sy(y);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{y}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            py + 4.0
        );
        y += y_step;
    }
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + pw / 2.0,
        H - 14.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        esc(y_label)
    );
    for m in markers {
        let px = sx(m.x);
        let _ = writeln!(
            s,
            r#"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="{}" stroke-dasharray="5,4"/><text x="{:.1}" y="{:.1}" fill="{}">{}</text>"#,
            TOP + ph,
            m.color,
            px + 4.0,
            TOP + 14.0,
            m.color,
            esc(&m.label)
        );
    }
    for (i, ser) in series.iter().enumerate() {
        let path: Vec<String> = ser
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>"#,
            ser.color,
            path.join(" ")
        );
        for &(x, y) in &ser.points {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                sx(x),
                sy(y),
                ser.color
            );
        }
        let ly = TOP + 16.0 + 18.0 * i as f64;
        let lx = LEFT + pw - 190.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="2"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 22.0,
            ser.color,
            lx + 28.0,
            ly + 4.0,
            esc(&ser.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_wellformed_chart() {
        let svg = line_chart(
            "t < 2",
            "x",
            "y",
            &[Series {
                name: "a & b".into(),
                color: "blue",
                points: vec![(1.0, 10.0), (2.0, 5.0)],
            }],
            &[Marker {
                x: 2.0,
                label: "est".into(),
                color: "gray",
            }],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("t &lt; 2") && svg.contains("a &amp; b"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(tick_step(37.0, 10.0), 5.0);
    }
}

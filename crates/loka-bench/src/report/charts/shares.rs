//! The locality-share chart: a 100% bar per benchmark and policy.

use super::*;

/// The colours of [`Shares`] parts: dark blue (local), light blue, red (far); then the palette.
fn share_colour(part: usize) -> RGBAColor {
    match part {
        0 => RGBColor(33, 102, 172).to_rgba(),
        1 => RGBColor(146, 197, 222).to_rgba(),
        2 => RGBColor(214, 96, 77).to_rgba(),
        _ => Palette99::pick(part).to_rgba(),
    }
}

/// Draws a [`Shares`] grid into the SVG file `path`. Returns `false` (and writes nothing) when no
/// cell has data.
pub fn share_chart(path: &Path, shares: &Shares) -> Result<bool, String> {
    if !shares.values.iter().flatten().any(Option::is_some) {
        return Ok(false);
    }
    const ROW: i32 = 20;
    const BAR: i32 = 14;
    const TOP: i32 = 100;
    const GAP: i32 = 12;
    let chars = |v: &[String]| v.iter().map(|s| s.chars().count()).max().unwrap_or(0) as i32;
    let label_w = chars(&shares.rows) * 7 + 24;
    let col_w = (chars(&shares.columns) * 7 + 12).max(110);
    let n_rows = shares.rows.len() as i32;
    let width = 16 + label_w + shares.columns.len() as i32 * (col_w + GAP) + 8;
    let legend_w: i32 = 16
        + shares
            .parts
            .iter()
            .map(|p| p.chars().count() as i32 * 7 + 40)
            .sum::<i32>()
        + 200;
    let width = width.max(legend_w).max(480);
    let height = TOP + n_rows * ROW + 40;
    let root = SVGBackend::new(path, (width as u32, height as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    root.draw(&Text::new(
        shares.title.clone(),
        (16, 8),
        ("sans-serif", 20),
    ))
    .map_err(draw_error)?;
    // The legend: one swatch per part, and the grey outline.
    let mut x = 16;
    let mut swatches: Vec<(String, Option<RGBAColor>)> = shares
        .parts
        .iter()
        .enumerate()
        .map(|(i, p)| (p.clone(), Some(share_colour(i))))
        .collect();
    swatches.push(("no data".into(), None));
    for (name, colour) in swatches {
        let rect = [(x, 44), (x + 14, 58)];
        match colour {
            Some(c) => root.draw(&Rectangle::new(rect, c.filled())),
            None => root.draw(&Rectangle::new(
                rect,
                RGBColor(170, 170, 170).stroke_width(1),
            )),
        }
        .map_err(draw_error)?;
        root.draw(&Text::new(name.clone(), (x + 20, 44), ("sans-serif", 13)))
            .map_err(draw_error)?;
        x += name.chars().count() as i32 * 7 + 44;
    }
    let centre =
        TextStyle::from(("sans-serif", 13)).pos(text_anchor::Pos::new(HPos::Center, VPos::Bottom));
    let right =
        TextStyle::from(("sans-serif", 13)).pos(text_anchor::Pos::new(HPos::Right, VPos::Center));
    let inside = TextStyle::from(("sans-serif", 11))
        .color(&WHITE)
        .pos(text_anchor::Pos::new(HPos::Left, VPos::Center));
    let small =
        TextStyle::from(("sans-serif", 11)).pos(text_anchor::Pos::new(HPos::Center, VPos::Top));
    let col_x = |c: usize| 16 + label_w + c as i32 * (col_w + GAP);
    for (c, name) in shares.columns.iter().enumerate() {
        root.draw(&Text::new(
            name.clone(),
            (col_x(c) + col_w / 2, TOP - 6),
            centre.clone(),
        ))
        .map_err(draw_error)?;
        for (t, text, h) in [
            (0, "0%", HPos::Left),
            (col_w / 2, "50%", HPos::Center),
            (col_w, "100%", HPos::Right),
        ] {
            root.draw(&Text::new(
                text,
                (col_x(c) + t, TOP + n_rows * ROW + 4),
                small.pos(text_anchor::Pos::new(h, VPos::Top)),
            ))
            .map_err(draw_error)?;
        }
    }
    for (r, (name, cells)) in shares.rows.iter().zip(&shares.values).enumerate() {
        let y = TOP + r as i32 * ROW;
        if r % 2 == 1 {
            root.draw(&Rectangle::new(
                [(8, y), (width - 8, y + ROW)],
                RGBColor(243, 243, 243).filled(),
            ))
            .map_err(draw_error)?;
        }
        root.draw(&Text::new(
            name.clone(),
            (16 + label_w - 10, y + ROW / 2),
            right.clone(),
        ))
        .map_err(draw_error)?;
        let (y0, y1) = (y + (ROW - BAR) / 2, y + (ROW + BAR) / 2);
        for (c, cell) in cells.iter().enumerate() {
            let x0 = col_x(c);
            let Some(parts) = cell else {
                root.draw(&Rectangle::new(
                    [(x0, y0), (x0 + col_w, y1)],
                    RGBColor(170, 170, 170).stroke_width(1),
                ))
                .map_err(draw_error)?;
                continue;
            };
            let mut at = 0.0;
            for (p, share) in parts.iter().enumerate() {
                let share = share.clamp(0.0, 1.0);
                let from = x0 + (at * f64::from(col_w)).round() as i32;
                at = (at + share).min(1.0);
                let to = x0 + (at * f64::from(col_w)).round() as i32;
                if to > from {
                    root.draw(&Rectangle::new(
                        [(from, y0), (to, y1)],
                        share_colour(p).filled(),
                    ))
                    .map_err(draw_error)?;
                }
            }
            // The first part's share, written inside its bar when there is room.
            if let Some(first) = parts.first() {
                let w = (first.clamp(0.0, 1.0) * f64::from(col_w)).round() as i32;
                if w >= 32 {
                    root.draw(&Text::new(
                        format!("{:.0}%", first * 100.0),
                        (x0 + 3, y + ROW / 2),
                        inside.clone(),
                    ))
                    .map_err(draw_error)?;
                }
            }
        }
    }
    root.present().map_err(draw_error)?;
    Ok(true)
}

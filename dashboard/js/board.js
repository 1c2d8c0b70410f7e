// The Gomoku board on a canvas: the 15×15 grid with the coordinates of art. 1 (columns a–o, rows 1–15 from Black's
// side), the star points, the stones and the last stone marked.  A layout is the board's size and margins in CSS
// pixels and its line and mark sizes; the canvas is drawn at the screen's pixel ratio.

export const COLUMNS = "abcdefghijklmno";
const STARS = ["h8", "d4", "l4", "d12", "l12"];
const POINT = /^([a-o])(1[0-5]|[1-9])$/;
const POINTS = /[a-o](?:1[0-5]|[1-9])/g;

export function boardLayout({ px, left, bottom, top, right, line, star, font, mark }) {
  return { px, left, bottom, top, right, line, star, font, mark, cell: (px - left - right) / 14 };
}

export function pointXY(layout, point) {
  const match = POINT.exec(point || "");
  if (!match) return null;
  const column = COLUMNS.indexOf(match[1]), row = Number(match[2]);
  return [layout.left + column * layout.cell, layout.top + (15 - row) * layout.cell];
}

// The canvas sized for the layout at the screen's pixel ratio, and its context (drawing in CSS pixels).
export function boardContext(canvas, layout) {
  const ratio = window.devicePixelRatio || 1;
  const size = Math.round(layout.px * ratio);
  if (canvas.width !== size) canvas.width = canvas.height = size;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return { ctx, ratio };
}

// The empty board: wood, grid, star points and coordinates.
export function drawGrid(ctx, layout) {
  const { px, left, bottom, top, cell } = layout;
  ctx.fillStyle = "#e4bd72";
  ctx.fillRect(0, 0, px, px);
  ctx.strokeStyle = "#5b4521";
  ctx.lineWidth = layout.line;
  ctx.beginPath();
  for (let i = 0; i < 15; i++) {
    const x = left + i * cell, y = top + i * cell;
    ctx.moveTo(x, top); ctx.lineTo(x, top + 14 * cell);
    ctx.moveTo(left, y); ctx.lineTo(left + 14 * cell, y);
  }
  ctx.stroke();
  ctx.fillStyle = "#5b4521";
  for (const star of STARS) {
    const [x, y] = pointXY(layout, star);
    ctx.beginPath(); ctx.arc(x, y, layout.star, 0, 2 * Math.PI); ctx.fill();
  }
  ctx.fillStyle = "#3b2c12";
  ctx.font = layout.font;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (let i = 0; i < 15; i++) {
    ctx.fillText(COLUMNS[i], left + i * cell, px - bottom / 2 + 2);
    ctx.fillText(String(15 - i), left / 2 - 1, top + i * cell);
  }
}

// Stones of one colour at these points; how many were drawn (points off the board are not).
export function drawStones(ctx, layout, colour, points) {
  const radius = layout.cell * 0.46;
  ctx.fillStyle = colour === "black" ? "#111" : "#fafafa";
  ctx.strokeStyle = colour === "black" ? "#000" : "#444";
  ctx.lineWidth = layout.line;
  let drawn = 0;
  for (const point of points) {
    const at = pointXY(layout, point);
    if (!at) continue;
    ctx.beginPath(); ctx.arc(at[0], at[1], radius, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
    drawn += 1;
  }
  return drawn;
}

// The last stone's mark.
export function markLast(ctx, layout, point) {
  const at = pointXY(layout, point);
  if (!at) return;
  ctx.fillStyle = "#e11d48";
  ctx.beginPath(); ctx.arc(at[0], at[1], layout.cell * 0.46 * layout.mark, 0, 2 * Math.PI); ctx.fill();
}

// The last stone placed of a position (`{black, white}` points) after its moves' tokens (an opening's offers are
// candidates, not stones).
export function lastStone(position, moves) {
  const placed = new Set([...position.black, ...position.white]);
  for (let i = moves.length - 1; i >= 0; i--) {
    const token = moves[i];
    if (token.startsWith("offer:")) continue;
    const points = token.match(POINTS);
    if (points) {
      for (let j = points.length - 1; j >= 0; j--) if (placed.has(points[j])) return points[j];
    }
  }
  return null;
}

// The board's text for a screen reader: "12 stones, last h8".
export function boardLabel(stones, last) {
  return `${stones} stones` + (last ? `, last ${last}` : "");
}

// Line plots of the last minutes on a <canvas>, drawn by hand (no chart library).

const COLORS = ['#0b6bcb', '#c2410c', '#137333', '#7c3aed'];

export class TimePlot {
  /** series: names of the lines; capacity: points kept (one per sample). */
  constructor(canvas, series, capacity = 600) {
    this.canvas = canvas;
    this.series = series;
    this.capacity = capacity;
    this.points = series.map(() => []);
  }

  push(values) {
    values.forEach((v, i) => {
      const list = this.points[i];
      list.push(Number.isFinite(v) ? v : 0);
      if (list.length > this.capacity) list.shift();
    });
    this.draw();
  }

  draw() {
    const c = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const w = c.clientWidth || c.width;
    const h = c.clientHeight || c.height;
    if (c.width !== Math.round(w * ratio)) { c.width = Math.round(w * ratio); c.height = Math.round(h * ratio); }
    const g = c.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    const left = 48, right = 8, top = 18, bottom = 16;
    const max = Math.max(1, ...this.points.flat());
    const top10 = niceCeiling(max);
    g.font = '11px sans-serif';
    g.strokeStyle = '#e2e6ea';
    g.fillStyle = '#6b7480';
    g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = top + (h - top - bottom) * (1 - i / 4);
      g.beginPath(); g.moveTo(left, y); g.lineTo(w - right, y); g.stroke();
      g.fillText(shortNumber(top10 * i / 4), 4, y + 4);
    }
    g.fillText(`${Math.round(this.capacity / 60)} min`, left, h - 3);
    const span = this.capacity - 1;
    this.points.forEach((list, s) => {
      if (list.length < 1) return;
      g.strokeStyle = COLORS[s % COLORS.length];
      g.lineWidth = 1.5;
      g.beginPath();
      list.forEach((v, i) => {
        const x = left + (w - left - right) * ((span - (list.length - 1 - i)) / span);
        const y = top + (h - top - bottom) * (1 - v / top10);
        if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
      });
      g.stroke();
      g.fillStyle = COLORS[s % COLORS.length];
      g.fillText(`${this.series[s]} ${shortNumber(list[list.length - 1])}`, left + 4 + s * 130, 12);
    });
  }
}

function niceCeiling(v) {
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function shortNumber(v) {
  if (v >= 1e9) return (v / 1e9).toFixed(1) + 'G';
  if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M';
  if (v >= 1e4) return (v / 1e3).toFixed(1) + 'k';
  return String(Math.round(v * 100) / 100);
}

/**
 * A time-series chart of the usage screen, drawn by uPlot on a canvas that
 * follows its container's width. The canvas is hidden from assistive
 * technology: the figure's caption says what it shows, and the screen's totals
 * table carries the same numbers as text.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  /** One value per time (null: nothing measured then). */
  values: (number | null)[];
  /** A CSS colour with enough contrast on the card's background. */
  stroke: string;
}

const HEIGHT = 180;

export function UsageChart(props: {
  title: string;
  /** Seconds since the epoch, one per point. */
  times: number[];
  series: ChartSeries[];
  /** Says what a value is (bytes, requests, ms). */
  unit: string;
}) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const width = () => Math.max(240, element.clientWidth);
    const chart = new uPlot(
      {
        width: width(),
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true } },
        // The console shows every time in UTC.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        axes: [{ label: "UTC" }, { label: props.unit, size: 70 }],
        series: [
          {},
          ...props.series.map((s) => ({
            label: s.label,
            stroke: s.stroke,
            width: 2,
            points: { show: true },
          })),
        ],
      },
      [props.times, ...props.series.map((s) => s.values)] as uPlot.AlignedData,
      element,
    );
    const resized = new ResizeObserver(() => chart.setSize({ width: width(), height: HEIGHT }));
    resized.observe(element);
    return () => {
      resized.disconnect();
      chart.destroy();
    };
  }, [props.times, props.series, props.unit]);
  return (
    <figure class="card usage-chart">
      <figcaption>
        <strong>{props.title}</strong>
        <span class="usage-legend">
          {props.series.map((s) => (
            <span key={s.label} class="usage-key">
              <span class="usage-swatch" style={{ background: s.stroke }} aria-hidden="true" />
              {s.label}
            </span>
          ))}
        </span>
      </figcaption>
      <div ref={holder} class="usage-canvas" aria-hidden="true" />
    </figure>
  );
}

// The gate's checks on a timeline: one row per property, one mark per check in log order,
// green where it held and red where it failed. The table beside it says the same in words.
import { ScatterChart } from 'echarts/charts';
import { AriaComponent, GridComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';
import { type GateProgress, kProperties } from '../gate/progress';

echarts.use([ScatterChart, GridComponent, TooltipComponent, AriaComponent, CanvasRenderer]);

export function GateChart({ gate }: { gate: GateProgress }) {
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  useEffect(() => {
    if (!host.current) return;
    chart.current = echarts.init(host.current, undefined, { renderer: 'canvas' });
    const onResize = (): void => chart.current?.resize();
    window.addEventListener('resize', onResize);
    return () => {
      window.removeEventListener('resize', onResize);
      chart.current?.dispose();
      chart.current = null;
    };
  }, []);
  useEffect(() => {
    const points = gate.properties.flatMap((p) =>
      p.facts.map((f) => ({ value: [f.seq, kProperties.indexOf(p.property)], ok: f.ok, check: f.check, stage: f.stage, world: f.world ?? p.world ?? '' })),
    );
    chart.current?.setOption({
      aria: { enabled: true, label: { description: `Gate checks over time: ${points.filter((p) => p.ok).length} held, ${points.filter((p) => !p.ok).length} failed.` } },
      animation: false,
      grid: { left: 80, right: 16, top: 16, bottom: 32 },
      xAxis: { type: 'value', name: 'log seq', nameLocation: 'middle', nameGap: 22, scale: true, minInterval: 1 },
      yAxis: { type: 'category', data: [...kProperties], inverse: true },
      tooltip: {
        trigger: 'item',
        formatter: (p: { data: { check: string; stage: string; ok: boolean; world: string; value: number[] } }) =>
          `seq ${p.data.value[0]}: ${p.data.check} ${p.data.ok ? 'held' : 'failed'} (${p.data.stage}${p.data.world ? `, ${p.data.world}` : ''})`,
      },
      series: [
        {
          type: 'scatter',
          symbolSize: 11,
          data: points.map((p) => ({ ...p, itemStyle: { color: p.ok ? '#1a7f37' : '#c62828' }, symbol: p.ok ? 'circle' : 'diamond' })),
        },
      ],
    });
  }, [gate]);
  return <div ref={host} className="gate-chart" role="img" aria-label="Timeline of the gate's checks per property; the table says the same in words." />;
}

/** The part of autocannon 9's API that bench/run.ts uses (the package ships no types). */
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
    total?: number;
    totalCount?: number;
  }
  interface Result {
    title?: string;
    url: string;
    connections: number;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { total: number; sent: number };
    throughput: Histogram;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    /** Requests per second over all connections (latencies then corrected for coordinated omission). */
    overallRate?: number;
    title?: string;
    setupClient?: (client: { setHeaders(headers: Record<string, string>): void; setBody(body: string): void }) => void;
  }
  function autocannon(opts: Options): Promise<Result> & { stop(): void };
  export = autocannon;
}

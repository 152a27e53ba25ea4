'use strict';
// BullMQ against a server on 127.0.0.1:<port> (tests/bullmq_test.go):
//   node bullmq.js <port> [section,...]
// Each section drives one part of BullMQ (its jobs move only through its
// Lua scripts; QueueEvents reads the events stream with XREAD BLOCK) and
// its outcome is compared with what redis-server 7.0 gives (the expected
// values below). The sections run side by side, each on queues of its own.
// One line per section, "ok <name>" or "FAIL <name> ...", then
// "redis-errors <json>": every error reply any connection got, by
// command and message. Exit status 0 when every section passed.
const Redis = require('ioredis');
const bullmq = require('bullmq');
const { Queue, Worker, QueueEvents, FlowProducer } = bullmq;

const port = Number(process.argv[2]);
const only = process.argv[3] ? process.argv[3].split(',') : null;
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
const prefix = 'bmq' + Date.now().toString(36) + process.pid.toString(36);
const opts = (extra) => Object.assign({ connection, prefix }, extra || {});
const eventsOpts = () => opts({ lastEventId: '0' }); // every event, from the stream's start
// Waits are bounded far above what they take (well under a second), so
// that only a real failure reaches them on a busy machine.
const WAIT = 15000;

// Every error reply, also those BullMQ handles itself.
const redisErrors = {};
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (command, stream) {
  if (command.promise && command.promise.catch) {
    command.promise.catch((err) => {
      if (err && err.name === 'ReplyError') {
        const k = command.name + ': ' + String(err.message).split('\n')[0];
        redisErrors[k] = (redisErrors[k] || 0) + 1;
      }
    });
  }
  return sendCommand.call(this, command, stream);
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(cond, what) {
  const end = Date.now() + WAIT;
  while (Date.now() < end) {
    if (await cond()) return;
    await sleep(20);
  }
  throw new Error('timed out waiting for ' + (typeof what === 'function' ? what() : what));
}

// A section's context: what it opened (closed when it ends) and the
// 'error' events those emitted.
function context() {
  const opened = [];
  const errors = [];
  return {
    errors,
    track(x) {
      opened.push(x);
      if (x.on) x.on('error', (e) => errors.push(String(e && e.message)));
      return x;
    },
    async close() {
      while (opened.length) {
        const x = opened.pop();
        try {
          await Promise.race([x.close(), sleep(5000)]);
        } catch (e) {
          errors.push('close: ' + e.message);
        }
      }
    },
  };
}

const sections = {};
const expected = {};

sections.basic = async (c) => {
  const q = c.track(new Queue('basic', opts()));
  const qe = c.track(new QueueEvents('basic', eventsOpts()));
  const seen = { completed: 0, added: 0, active: 0 };
  for (const ev of Object.keys(seen)) qe.on(ev, () => seen[ev]++);
  const first = await q.add('one', { n: 1 });
  const bulk = await q.addBulk([2, 3, 4, 5, 6].map((n) => ({ name: 'bulk', data: { n } })));
  const countsBefore = await q.getJobCounts('wait', 'active', 'completed');
  let running = 0, maxRunning = 0;
  c.track(new Worker('basic', async (job) => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    await sleep(300);
    running--;
    return job.data.n * 10;
  }, opts({ concurrency: 3 })));
  await until(async () => (await q.getCompletedCount()) === 6, 'the jobs');
  await until(() => seen.completed === 6 && seen.added === 6, 'the events');
  const job = await q.getJob(first.id);
  return {
    ids: [first.id, ...bulk.map((b) => b.id)],
    countsBefore,
    counts: await q.getJobCounts('wait', 'active', 'completed', 'failed', 'delayed'),
    concurrent: maxRunning > 1,
    returnvalue: job.returnvalue,
    state: await job.getState(),
    events: seen,
    workers: (await q.getWorkers()).length,
  };
};
expected.basic = {
  ids: ['1', '2', '3', '4', '5', '6'],
  countsBefore: { wait: 6, active: 0, completed: 0 },
  counts: { wait: 0, active: 0, completed: 6, failed: 0, delayed: 0 },
  concurrent: true, returnvalue: 10, state: 'completed',
  events: { completed: 6, added: 6, active: 6 }, workers: 1,
};

// Attempts with exponential and fixed backoff, the final failure, and a
// retry of the failed job.
sections.retries = async (c) => {
  const q = c.track(new Queue('retries', opts()));
  const qe = c.track(new QueueEvents('retries', eventsOpts()));
  const failed = [];
  const exhausted = [];
  qe.on('failed', ({ failedReason }) => failed.push(failedReason));
  qe.on('retries-exhausted', ({ attemptsMade }) => exhausted.push(Number(attemptsMade)));
  const tries = {};
  c.track(new Worker('retries', async (job) => {
    tries[job.name] = (tries[job.name] || 0) + 1;
    if (job.name === 'flaky' && job.attemptsMade < 2) throw new Error('flaky ' + job.attemptsMade);
    if (job.name === 'doomed') throw new Error('always');
    return 'ok';
  }, opts({ concurrency: 2 })));
  const flaky = await q.add('flaky', {}, { attempts: 3, backoff: { type: 'exponential', delay: 100 } });
  const doomed = await q.add('doomed', {}, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
  await until(async () => (await flaky.getState()) === 'completed' && (await doomed.getState()) === 'failed', 'completed and failed');
  const f = await q.getJob(flaky.id);
  const d = await q.getJob(doomed.id);
  await d.retry('failed');
  await until(async () => tries.doomed === 3 && (await d.getState()) === 'failed', 'the retried job');
  await until(() => failed.length === 2 && exhausted.length === 2, 'the failed events');
  const again = await q.getJob(doomed.id);
  return {
    flaky: { attemptsMade: f.attemptsMade, returnvalue: f.returnvalue, backedOff: f.finishedOn - f.timestamp >= 300 },
    doomed: { attemptsMade: d.attemptsMade, stacktraces: d.stacktrace.length },
    retried: { attemptsMade: again.attemptsMade, stacktraces: again.stacktrace.length },
    tries, failed, exhausted,
  };
};
expected.retries = {
  flaky: { attemptsMade: 3, returnvalue: 'ok', backedOff: true },
  doomed: { attemptsMade: 2, stacktraces: 2 },
  retried: { attemptsMade: 3, stacktraces: 3 },
  tries: { flaky: 3, doomed: 3 }, failed: ['always', 'always'], exhausted: [2, 3],
};

sections.delayed = async (c) => {
  const q = c.track(new Queue('delayed', opts()));
  const qe = c.track(new QueueEvents('delayed', eventsOpts()));
  let delayedEvents = 0;
  qe.on('delayed', () => delayedEvents++);
  const t0 = Date.now();
  const done = {};
  c.track(new Worker('delayed', async (job) => { done[job.name] = Date.now() - t0; }, opts()));
  const b = await q.add('d60s', {}, { delay: 60000 });
  const d = await q.add('d50s', {}, { delay: 50000 });
  const state = await b.getState();
  const delayedCount = await q.getDelayedCount();
  await q.add('d500', {}, { delay: 500 });
  await b.promote();
  await d.changeDelay(100);
  await until(() => Object.keys(done).length === 3, 'the delayed jobs');
  await until(() => delayedEvents >= 3, 'the delayed events');
  return { state, delayedCount, waited: done.d500 >= 480, promoted: done.d60s < 10000, changed: done.d50s < 10000 };
};
expected.delayed = { state: 'delayed', delayedCount: 2, waited: true, promoted: true, changed: true };

sections.priorities = async (c) => {
  const q = c.track(new Queue('prio', opts()));
  const order = [];
  const w = c.track(new Worker('prio', async (job) => { order.push(job.name); }, opts({ autorun: false, concurrency: 1 })));
  await q.add('p10', {}, { priority: 10 });
  await q.add('p1', {}, { priority: 1 });
  await q.add('none', {});
  await q.add('p5', {}, { priority: 5 });
  await q.add('p1b', {}, { priority: 1 });
  const counts = await q.getJobCounts('wait', 'prioritized');
  const prioritized = (await q.getPrioritized()).map((j) => j.name);
  const perPriority = await q.getCountsPerPriority([0, 1, 5, 10, 7]);
  const p10 = (await q.getJobs(['prioritized'])).find((x) => x.name === 'p10');
  await p10.changePriority({ priority: 2 });
  w.run();
  await until(() => order.length === 5, 'the jobs');
  return { counts, prioritized, perPriority, order };
};
expected.priorities = {
  counts: { wait: 1, prioritized: 4 }, prioritized: ['p1', 'p1b', 'p5', 'p10'],
  perPriority: { 0: 1, 1: 2, 5: 1, 10: 1, 7: 0 }, order: ['none', 'p1', 'p1b', 'p10', 'p5'],
};

sections.progress = async (c) => {
  const q = c.track(new Queue('progress', opts()));
  const qe = c.track(new QueueEvents('progress', eventsOpts()));
  const prog = [];
  qe.on('progress', ({ data }) => prog.push(data));
  c.track(new Worker('progress', async (job) => {
    await job.updateProgress(42);
    await job.log('halfway');
    await job.updateProgress({ pct: 100 });
    await job.updateData({ changed: true });
    return 'done';
  }, opts()));
  const job = await q.add('p', { x: 1 });
  const returned = await job.waitUntilFinished(qe, WAIT);
  await until(() => prog.length === 2, 'the progress events');
  const j = await q.getJob(job.id);
  return { returned, prog, progress: j.progress, data: j.data, logs: await q.getJobLogs(job.id) };
};
expected.progress = {
  returned: 'done', prog: [42, { pct: 100 }], progress: { pct: 100 }, data: { changed: true },
  logs: { logs: ['halfway'], count: 1 },
};

// The worker's limiter (2 jobs per 400 ms), a rate limit set from the
// processor (Worker.RateLimitError) and the queue's global concurrency.
sections.limiter = async (c) => {
  const q = c.track(new Queue('limiter', opts()));
  const t0 = Date.now();
  const times = [];
  await q.addBulk([1, 2, 3, 4, 5, 6].map((n) => ({ name: 'l', data: { n } })));
  c.track(new Worker('limiter', async () => { times.push(Date.now() - t0); }, opts({ concurrency: 4, limiter: { max: 2, duration: 400 } })));
  await until(() => times.length === 6, 'the limited jobs');
  const ttl = await q.getRateLimitTtl();
  const q2 = c.track(new Queue('limiter2', opts()));
  let limited = false, runs = 0;
  const w2 = c.track(new Worker('limiter2', async () => {
    runs++;
    if (!limited) {
      limited = true;
      await w2.rateLimit(150);
      throw Worker.RateLimitError();
    }
    return 'after the limit';
  }, opts()));
  const j = await q2.add('r', {});
  await until(async () => (await j.getState()) === 'completed', 'the rate-limited job');
  await q2.setGlobalConcurrency(3);
  const global = await q2.getGlobalConcurrency();
  await q2.removeGlobalConcurrency();
  return {
    n: times.length, spread: times[5] >= 780, ttlType: typeof ttl,
    limited: [runs, (await q2.getJob(j.id)).returnvalue], global, isMaxed: await q2.isMaxed(),
  };
};
expected.limiter = { n: 6, spread: true, ttlType: 'number', limited: [2, 'after the limit'], global: 3, isMaxed: false };

// Repeatable jobs: job schedulers (every, cron pattern).
sections.schedulers = async (c) => {
  const q = c.track(new Queue('sched', opts()));
  let runs = 0;
  c.track(new Worker('sched', async () => { runs++; }, opts()));
  await q.upsertJobScheduler('every200', { every: 200 }, { name: 'tick', data: { a: 1 } });
  await q.upsertJobScheduler('cron', { pattern: '0 0 1 1 *' }, { name: 'yearly' });
  const keys = (await q.getJobSchedulers()).map((s) => s.key).sort();
  const count = await q.getJobSchedulersCount();
  const one = await q.getJobScheduler('every200');
  await until(() => runs >= 3, 'three runs');
  const removed = await q.removeJobScheduler('every200');
  return { keys, count, one: [one.key, one.every, one.name], removed, after: await q.getJobSchedulersCount() };
};
expected.schedulers = { keys: ['cron', 'every200'], count: 2, one: ['every200', 200, 'tick'], removed: true, after: 1 };

sections.removeOn = async (c) => {
  const q = c.track(new Queue('removeon', opts()));
  c.track(new Worker('removeon', async (job) => { if (job.data.fail) throw new Error('x'); }, opts({ concurrency: 2 })));
  for (let i = 0; i < 5; i++) await q.add('ok', {}, { removeOnComplete: { count: 2 } });
  for (let i = 0; i < 4; i++) await q.add('bad', { fail: true }, { removeOnFail: { count: 1 } });
  const gone = await q.add('gone', {}, { removeOnComplete: true });
  await until(async () => {
    const n = await q.getJobCounts('wait', 'active');
    return n.wait === 0 && n.active === 0 && (await q.getJob(gone.id)) === undefined;
  }, 'the jobs');
  const aged = await q.add('aged', {}, { removeOnComplete: { age: 3600 }, keepLogs: 2 });
  for (let i = 0; i < 4; i++) await aged.log('line ' + i);
  await until(async () => (await aged.getState()) === 'completed', 'the aged job');
  return {
    counts: await q.getJobCounts('completed', 'failed'),
    agedKept: (await q.getJob(aged.id)) !== undefined,
    logs: (await q.getJobLogs(aged.id)).logs,
  };
};
expected.removeOn = { counts: { completed: 3, failed: 1 }, agedKept: true, logs: ['line 2', 'line 3'] };

sections.pause = async (c) => {
  const q = c.track(new Queue('pause', opts()));
  const qe = c.track(new QueueEvents('pause', eventsOpts()));
  const ev = [];
  qe.on('paused', () => ev.push('paused'));
  qe.on('resumed', () => ev.push('resumed'));
  let done = 0;
  const w = c.track(new Worker('pause', async () => { done++; }, opts()));
  await w.waitUntilReady();
  await q.pause();
  const paused = await q.isPaused();
  await q.add('a', {});
  await q.add('b', {});
  await sleep(300);
  const doneWhilePaused = done;
  const counts = await q.getJobCounts('paused', 'wait');
  await q.resume();
  await until(() => done === 2, 'the resumed jobs');
  await until(() => ev.length === 2, 'the pause events');
  await w.pause(); // the worker alone
  await q.add('c', {});
  await sleep(200);
  const doneWorkerPaused = done;
  w.resume();
  await until(() => done === 3, 'the worker resumed');
  return { paused, doneWhilePaused, counts, ev, doneWorkerPaused, pausedAfter: await q.isPaused() };
};
expected.pause = {
  paused: true, doneWhilePaused: 0, counts: { paused: 0, wait: 2 }, ev: ['paused', 'resumed'],
  doneWorkerPaused: 2, pausedAfter: false,
};

sections.clean = async (c) => {
  const q = c.track(new Queue('clean', opts()));
  const w = c.track(new Worker('clean', async (job) => { if (job.data.f) throw new Error('f'); }, opts({ concurrency: 3 })));
  await q.addBulk([1, 2, 3, 4].map((n) => ({ name: 'c', data: { f: n > 2 } })));
  await until(async () => (await q.getCompletedCount()) === 2 && (await q.getFailedCount()) === 2, 'the jobs');
  await w.close();
  await q.add('waiting', {});
  await q.add('delayed', {}, { delay: 60000 });
  await sleep(20);
  const cleaned = [
    (await q.clean(0, 10, 'completed')).length,
    (await q.clean(0, 1, 'failed')).length,
    (await q.clean(0, 10, 'wait')).length,
  ];
  const counts = await q.getJobCounts('completed', 'failed', 'wait', 'delayed');
  await q.retryJobs({ state: 'failed' });
  const retried = await q.getJobCounts('failed', 'wait');
  await q.drain(true);
  const drained = await q.getJobCounts('wait', 'delayed');
  const j = await q.add('rm', {});
  await j.remove();
  return { cleaned, counts, retried, drained, removed: (await q.getJob(j.id)) === undefined };
};
expected.clean = {
  cleaned: [2, 1, 1], counts: { completed: 0, failed: 1, wait: 0, delayed: 1 },
  retried: { failed: 0, wait: 1 }, drained: { wait: 0, delayed: 0 }, removed: true,
};

// promoteJobs passes Number.MAX_VALUE, which ioredis sends as its 309
// integer digits: the script's tonumber must read it as Lua does.
sections.obliterate = async (c) => {
  const q = c.track(new Queue('oblit', opts()));
  await q.addBulk(Array.from({ length: 50 }, (_, i) => ({ name: 'o', data: { i } })));
  await q.add('d1', {}, { delay: 60000 });
  await q.add('d2', {}, { delay: 60000 });
  await q.promoteJobs();
  const promoted = await q.getJobCounts('delayed', 'wait');
  await q.upsertJobScheduler('s', { every: 100000 });
  const r = c.track(new Redis(connection));
  r.close = () => r.quit();
  const before = (await r.keys(prefix + ':oblit:*')).length > 0;
  await q.pause();
  await q.obliterate({ force: true });
  return { promoted, before, after: await r.keys(prefix + ':oblit:*') };
};
expected.obliterate = { promoted: { delayed: 0, wait: 52 }, before: true, after: [] };

sections.flow = async (c) => {
  const fp = c.track(new FlowProducer(opts()));
  const order = [];
  c.track(new Worker('flowparent', async (job) => {
    order.push(job.name);
    return Object.values(await job.getChildrenValues()).sort((a, b) => a - b);
  }, opts()));
  c.track(new Worker('flowchild', async (job) => { order.push(job.name); return job.data.v; }, opts({ concurrency: 2 })));
  const tree = await fp.add({
    name: 'parent', queueName: 'flowparent', data: {},
    children: [
      { name: 'c1', queueName: 'flowchild', data: { v: 1 } },
      { name: 'c2', queueName: 'flowchild', data: { v: 2 } },
      { name: 'c3', queueName: 'flowchild', data: { v: 3 }, children: [{ name: 'g1', queueName: 'flowchild', data: { v: 4 } }] },
    ],
  });
  const parentState = await tree.job.getState();
  const qp = c.track(new Queue('flowparent', opts()));
  await until(async () => (await qp.getCompletedCount()) === 1, 'the parent');
  const p = await qp.getJob(tree.job.id);
  const flow = await fp.getFlow({ id: tree.job.id, queueName: 'flowparent' });
  // failParentOnFailure
  c.track(new Worker('flowbad', async (job) => { if (job.name === 'badchild') throw new Error('child broke'); return 1; }, opts()));
  const t2 = await fp.add({ name: 'p2', queueName: 'flowbad', children: [{ name: 'badchild', queueName: 'flowbad', opts: { failParentOnFailure: true } }] });
  await until(async () => (await t2.job.getState()) === 'failed', 'the failed parent');
  const qb = c.track(new Queue('flowbad', opts()));
  const p2 = await qb.getJob(t2.job.id);
  // dependencies, removeChildDependency, removeUnprocessedChildren
  const t3 = await fp.add({ name: 'p3', queueName: 'flowidle', children: [
    { name: 'k1', queueName: 'flowidle' }, { name: 'k2', queueName: 'flowidle' }, { name: 'k3', queueName: 'flowidle' }] });
  const deps = await t3.job.getDependencies();
  const depCount = await t3.job.getDependenciesCount();
  const removedDep = await t3.children[0].job.removeChildDependency();
  const depCount2 = await t3.job.getDependenciesCount();
  await t3.job.removeUnprocessedChildren();
  const qi = c.track(new Queue('flowidle', opts()));
  return {
    parentState, returnvalue: p.returnvalue, parentLast: order[order.length - 1] === 'parent',
    grandchildFirst: order.indexOf('g1') < order.indexOf('c3'), children: flow.children.length,
    failedReason: p2.failedReason.replace(prefix, 'P').replace(/:[0-9a-f-]{36} /, ':ID '),
    deps: [Object.keys(deps.processed || {}).length, (deps.unprocessed || []).length],
    depCount, removedDep, depCount2, idle: await qi.getJobCounts('wait', 'waiting-children'),
  };
};
expected.flow = {
  parentState: 'waiting-children', returnvalue: [1, 2, 3], parentLast: true, grandchildFirst: true, children: 3,
  failedReason: 'child P:flowbad:ID failed', deps: [0, 3],
  depCount: { processed: 0, unprocessed: 3, ignored: 0, failed: 0 }, removedDep: true,
  depCount2: { processed: 0, unprocessed: 2, ignored: 0, failed: 0 }, idle: { wait: 2, 'waiting-children': 0 },
};

// Deduplication (simple, with a TTL, replace and extend), and a job id
// given twice.
sections.dedup = async (c) => {
  const q = c.track(new Queue('dedup', opts()));
  const qe = c.track(new QueueEvents('dedup', eventsOpts()));
  let deduplicated = 0, duplicated = 0;
  qe.on('deduplicated', () => deduplicated++);
  qe.on('duplicated', () => duplicated++);
  const a = await q.add('x', { v: 1 }, { deduplication: { id: 'same' } });
  const b = await q.add('x', { v: 2 }, { deduplication: { id: 'same' } });
  const ttl1 = await q.add('x', { v: 3 }, { deduplication: { id: 'ttl', ttl: 2000 } });
  const ttl2 = await q.add('x', { v: 4 }, { deduplication: { id: 'ttl', ttl: 2000 } });
  await sleep(2100);
  const ttl3 = await q.add('x', { v: 5 }, { deduplication: { id: 'ttl', ttl: 2000 } });
  const dedupId = await q.getDeduplicationJobId('same');
  await q.add('y', { v: 6 }, { delay: 2000, deduplication: { id: 'rep', ttl: 2000, extend: true, replace: true } });
  const g = await q.add('y', { v: 7 }, { delay: 2000, deduplication: { id: 'rep', ttl: 2000, extend: true, replace: true } });
  const replaced = (await q.getJob(g.id)).data.v;
  const f1 = await q.add('z', {}, { jobId: 'fixed' });
  const f2 = await q.add('z', {}, { jobId: 'fixed' });
  const k = await q.add('k', {}, { deduplication: { id: 'k1' } });
  const removedKey = await k.removeDeduplicationKey();
  const removedAgain = await q.removeDeduplicationKey('k1');
  await until(() => deduplicated >= 3 && duplicated === 1, 'the events');
  return {
    same: a.id === b.id, ttlSame: ttl1.id === ttl2.id, ttlNew: ttl3.id !== ttl1.id, dedupId: dedupId === a.id,
    replaced, fixed: f1.id === f2.id, removedKey, removedAgain, counts: await q.getJobCounts('wait', 'delayed'),
  };
};
expected.dedup = {
  same: true, ttlSame: true, ttlNew: true, dedupId: true, replaced: 7, fixed: true,
  removedKey: true, removedAgain: 0, counts: { wait: 5, delayed: 1 },
};

// The stalled-jobs checker: a worker takes a job and dies (fetched by
// hand, never finished); another worker's checker moves it back to wait,
// then fails one that stalled past maxStalledCount.
sections.stalled = async (c) => {
  const q = c.track(new Queue('stalled', opts()));
  const qe = c.track(new QueueEvents('stalled', eventsOpts()));
  let stalledEvents = 0;
  qe.on('stalled', () => stalledEvents++);
  const job = await q.add('s', { v: 1 });
  const dead = c.track(new Worker('stalled', null, opts({ lockDuration: 300 })));
  const got = await dead.getNextJob('token-of-the-dead');
  const active = await q.getActiveCount();
  let done = 0, workerStalled = 0;
  const w = c.track(new Worker('stalled', async () => { done++; return 'recovered'; }, opts({ stalledInterval: 200, maxStalledCount: 1 })));
  w.on('stalled', () => workerStalled++);
  await until(() => done === 1, 'the stalled job, processed again');
  await until(() => stalledEvents === 1, 'the stalled event');
  // The processor has returned; the job's return value is stored a moment
  // later (moveToFinished), on a busy machine after this line ran.
  await until(async () => (await (await q.getJob(job.id)).getState()) === 'completed', 'the stalled job, completed');
  const j = await q.getJob(job.id);
  await w.close();
  const job2 = await q.add('s2', {}, { attempts: 1 });
  const dead2 = c.track(new Worker('stalled', null, opts({ lockDuration: 200 })));
  await dead2.getNextJob('token2');
  c.track(new Worker('stalled', async () => 'never', opts({ stalledInterval: 150, maxStalledCount: 0 })));
  await until(async () => (await job2.getState()) === 'failed', 'the job stalled too often');
  const j2 = await q.getJob(job2.id);
  return {
    got: got.id === job.id, active, returnvalue: j.returnvalue, stalledCounter: j.stalledCounter,
    workerStalled, failedReason: j2.failedReason,
  };
};
expected.stalled = {
  got: true, active: 1, returnvalue: 'recovered', stalledCounter: 1, workerStalled: 1,
  failedReason: 'job stalled more than allowable limit',
};

// Lock renewal, immediate retries, a job moved to delayed and dynamic
// children from the processor, metrics, and manual fetch and finish.
sections.worker = async (c) => {
  const q = c.track(new Queue('worker', opts()));
  const w = c.track(new Worker('worker', async (job, token) => {
    if (job.name === 'retrynow' && job.attemptsMade === 0) throw new Error('again');
    if (job.name === 'later' && !job.data.moved) {
      await job.updateData({ moved: true });
      await job.moveToDelayed(Date.now() + 200, token);
      throw new bullmq.DelayedError();
    }
    if (job.name === 'dyn') {
      if (job.data.step === undefined) {
        await q.add('dynchild', { v: 9 }, { parent: { id: job.id, queue: job.queueQualifiedName } });
        await job.updateData({ step: 1 });
        if (await job.moveToWaitingChildren(token)) throw new bullmq.WaitingChildrenError();
      }
      return Object.values(await job.getChildrenValues());
    }
    return job.name;
  }, opts({ concurrency: 3, metrics: { maxDataPoints: 10 } })));
  // A job that runs past lockDuration: its lock must be renewed. (Its
  // worker runs no job that leaves active from the processor: BullMQ may
  // then try to renew a lock already gone, and say so.)
  const ql = c.track(new Queue('worker-long', opts()));
  c.track(new Worker('worker-long', async () => {
    await sleep(2500);
    return 'long done';
  }, opts({ lockDuration: 2000, lockRenewTime: 250 })));
  const long = await ql.add('long', {});
  const jobs = await Promise.all(['retrynow', 'later', 'dyn'].map((n) => q.add(n, {}, n === 'retrynow' ? { attempts: 2 } : {})));
  let states;
  await until(async () => {
    states = await Promise.all([...jobs, long].map((j) => j.getState()));
    return states.every((s) => s === 'completed');
  }, () => 'the jobs: ' + states);
  const [a, l, d] = await Promise.all(jobs.map((j) => q.getJob(j.id)));
  const b = await ql.getJob(long.id);
  await w.close();
  const metrics = await q.getMetrics('completed');
  const m = c.track(new Worker('worker', null, opts({ lockDuration: 1000 })));
  await q.add('manual', {});
  const mj = await m.getNextJob('token-x');
  const extended = await mj.extendLock('token-x', 5000);
  const extendedOther = await mj.extendLock('other', 5000);
  await mj.moveToFailed(new Error('manual'), 'token-x', false);
  return {
    retrynow: [a.attemptsMade, a.returnvalue], long: [b.returnvalue, b.stalledCounter || 0], later: l.returnvalue,
    dyn: d.returnvalue, metrics: metrics.count >= 0, extended, extendedOther, manual: await mj.getState(),
    meta: Object.keys(await q.getMeta()).sort(), prometheus: (await q.exportPrometheusMetrics()).includes('bullmq_job_count'),
  };
};
expected.worker = {
  retrynow: [2, 'retrynow'], long: ['long done', 0], later: 'later', dyn: ['dynchild'], metrics: true,
  extended: 1, extendedOther: 0, manual: 'failed', meta: ['maxLenEvents', 'paused', 'version'], prometheus: true,
};

// What the scripts answer when asked for what cannot be done.
sections.refusals = async (c) => {
  const q = c.track(new Queue('refusals', opts()));
  const w = c.track(new Worker('refusals', null, opts({ lockDuration: 5000 })));
  const out = {};
  const attempt = async (name, fn) => {
    try {
      out[name] = ['ok', await fn()];
    } catch (e) {
      out[name] = ['error', String(e.message).replace(prefix, 'P').replace(/job \d+/, 'job N')];
    }
  };
  await q.add('a', {}, { jobId: 'fixed' });
  const active = await w.getNextJob('token1');
  await attempt('wrongToken', () => active.moveToCompleted('r', 'wrong', false));
  await attempt('removeLocked', () => active.remove());
  await attempt('promoteActive', () => active.promote());
  await attempt('changeDelayActive', () => active.changeDelay(100));
  await attempt('retryActive', () => active.retry('failed'));
  await attempt('missingParent', () => q.add('c', {}, { parent: { id: 'nope', queue: prefix + ':refusals' } }));
  await attempt('complete', () => active.moveToCompleted('r', 'token1', false).then(() => 'done'));
  await attempt('completeTwice', () => active.moveToCompleted('r', 'token1', false));
  await attempt('stateMissing', () => q.getJobState('nope'));
  await attempt('updateDataMissing', async () => { const k = await q.add('u', {}); await k.remove(); return k.updateData({ y: 1 }); });
  await attempt('progressMissing', async () => { const k = await q.add('u', {}); await k.remove(); return k.updateProgress(3); });
  const r = c.track(new Redis(connection));
  r.close = () => r.quit();
  await r.hset(prefix + ':refusals:orphan', 'name', 'x', 'data', '{}', 'timestamp', '1');
  out.orphans = [await q.removeOrphanedJobs(100, 1000), await r.exists(prefix + ':refusals:orphan')];
  return out;
};
expected.refusals = {
  wrongToken: ['error', 'Lock mismatch for job fixed. Cmd moveToFinished from active'],
  removeLocked: ['error', 'Job fixed could not be removed because it is locked by another worker'],
  promoteActive: ['error', 'Job fixed is not in the delayed state. promote'],
  changeDelayActive: ['error', 'Job fixed is not in the delayed state. changeDelay'],
  retryActive: ['error', 'Job fixed is not in the failed state. reprocessJob'],
  missingParent: ['error', 'Missing key for parent job P:refusals:nope. addJob'],
  complete: ['ok', 'done'],
  completeTwice: ['error', 'Missing lock for job fixed. moveToFinished'],
  stateMissing: ['ok', 'unknown'],
  updateDataMissing: ['error', 'Missing key for job N. updateData'],
  progressMissing: ['error', 'Missing key for job N. updateProgress'],
  orphans: [1, 0],
};

// BullMQ's relay (experimental in 6.x): topics routed through streams.
sections.relay = async (c) => {
  const r1 = c.track(new bullmq.Relay(opts({ namespace: 'ns1' })));
  const r2 = c.track(new bullmq.Relay(opts({ namespace: 'ns1' })));
  await r1.waitUntilReady();
  await r2.waitUntilReady();
  const got = [];
  const sub = await r2.subscribe('queues.*.progress', (m) => { got.push([m.topic, m.data]); });
  await r2.subscribe('queues.>', (m) => { got.push(['>', m.topic]); });
  const published = await r1.publish('queues.emails.progress', { pct: 5 });
  await r1.publish('queues.emails.other', 1);
  await r1.publish('nothing.here', 1);
  await r1.publish('queues.x.progress', 'kept', { retain: 60000 });
  await until(() => got.length >= 5, 'the messages');
  const out = {
    got: got.map((g) => JSON.stringify(g)).sort(), published: Object.keys(published).sort(),
    counts: await r1.getCounts(), nodes: (await r1.getNodes()).length, subs: (await r1.getSubscriptions()).length,
    patterns: (await r1.getPatterns()).map((p) => p.pattern).sort(), retained: (await r1.getRetained()).length,
    deleted: await r1.deleteRetained('queues.x.progress'), namespaces: await r1.getNamespaces(),
  };
  await sub.unsubscribe();
  return out;
};
expected.relay = {
  got: ['[">","queues.emails.other"]', '[">","queues.emails.progress"]', '[">","queues.x.progress"]',
    '["queues.emails.progress",{"pct":5}]', '["queues.x.progress","kept"]'],
  published: ['endpoints', 'mid', 'nodes'], counts: { nodes: 2, subscriptions: 2, patterns: 2, retained: 1 },
  nodes: 2, subs: 2, patterns: ['queues.*.progress', 'queues.>'], retained: 1, deleted: true, namespaces: ['ns1'],
};

// JSON with object keys sorted, to compare outcomes.
function canonical(v) {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (v && typeof v === 'object') return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  return JSON.stringify(v === undefined ? null : v);
}

async function main() {
  const names = Object.keys(sections).filter((n) => !only || only.includes(n));
  const outcomes = await Promise.all(names.map(async (name) => {
    const c = context();
    const t0 = Date.now();
    let line;
    try {
      const got = canonical(await sections[name](c));
      const want = canonical(expected[name]);
      line = got === want ? 'ok ' + name : 'FAIL ' + name + '\n  got:  ' + got + '\n  want: ' + want;
    } catch (e) {
      line = 'FAIL ' + name + ': ' + (e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e);
    }
    await c.close();
    if (c.errors.length && line.startsWith('ok')) line = 'FAIL ' + name + ': error events: ' + [...new Set(c.errors)].join('; ');
    return line + ' (' + (Date.now() - t0) + ' ms)';
  }));
  for (const line of outcomes) console.log(line);
  console.log('redis-errors ' + JSON.stringify(redisErrors));
  process.exit(outcomes.every((l) => l.startsWith('ok ')) ? 0 : 1);
}

main();

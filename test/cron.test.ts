// Pure functions for saved-task schedules: cron validation, time zone validation and the
// deterministic schedule ID.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cronProblems, scheduleIdFor, timezoneProblems } from '../src/schedules/cron';

describe('cronProblems', () => {
  const valid = [
    '*/15 * * * *',
    '0 9 * * MON-FRI',
    '30 2 1,15 * *',
    '0 0 * JAN,JUL SUN',
    '@daily',
    '@hourly',
    '0 0 * * 7',
    // Beyond the brief's list: the other shorthands, case-insensitivity, N/S, N-M/S,
    // leading/trailing and repeated whitespace.
    '@yearly',
    '@annually',
    '@monthly',
    '@weekly',
    '@midnight',
    '@DAILY',
    '0 9 * * mon-fri',
    '5/10 * * * *',
    '0-30/5 0-23/2 1-31/3 1-12/6 0-7/1',
    '  0   12 * * *  ',
    '59 23 31 12 6',
    '0 0 * jan-dec sun-sat',
  ];
  for (const expression of valid) {
    test(`accepts ${JSON.stringify(expression)}`, () => {
      assert.deepEqual(cronProblems(expression), []);
    });
  }

  const invalid: Array<[unknown, string]> = [
    ['61 * * * *', 'cron field "minute" has 61, but it must be 0-59'],
    ['* * *', 'has 3 fields, but it must have exactly 5'],
    ['0 0 0 * *', 'cron field "day-of-month" has 0, but it must be 1-31'],
    ['5-1 * * * *', 'cron field "minute" has range "5-1", but a range must be ascending'],
    ['*/0 * * * *', 'cron field "minute" has step 0 in "*/0", but a step must be a whole number of at least 1'],
    ['0 0 * * FOO', 'cron field "day-of-week" has "FOO", but it must be 0-7 (0 and 7 are Sunday) or SUN-SAT'],
    ['@every 5m', 'uses @every, which is not supported'],
    ['0 0 0 * * * *', 'has 7 fields, but only 5 fields'],
    ['0 0 * * * *', 'has 6 fields, but only 5 fields'],
    ['', 'cron expression is empty'],
    ['   ', 'cron expression is empty'],
    [42, 'cron expression must be a string'],
    [undefined, 'cron expression must be a string'],
    [null, 'but it is null'],
    ['@reboot', '"@reboot" is not supported'],
    ['@fortnightly', 'is not a supported shorthand'],
    ['0 25 * * *', 'cron field "hour" has 25, but it must be 0-23'],
    ['0 0 * 13 *', 'cron field "month" has 13, but it must be 1-12 or JAN-DEC'],
    ['0 0 * * 8', 'cron field "day-of-week" has 8'],
    ['0 0 * FOO *', 'cron field "month" has "FOO", but it must be 1-12 or JAN-DEC'],
    ['MON * * * *', 'cron field "minute" has "MON", but it must be 0-59'],
    ['1,,2 * * * *', 'cron field "minute" has an empty entry'],
    ['*/x * * * *', 'has step "x"'],
    ['1/2/3 * * * *', 'at most one "/"'],
    ['0 0 L * *', '?, L, W and # are not supported'],
    ['0 0 * * 5#3', '?, L, W and # are not supported'],
    ['0 0 * * FRI-MON', 'use a comma list for ranges that wrap around'],
    ['CRON_TZ=Europe/Berlin 0 9 * * *', "set the schedule's timezone instead"],
  ];
  for (const [expression, fragment] of invalid) {
    test(`rejects ${JSON.stringify(expression) ?? String(expression)} with "${fragment}"`, () => {
      const problems = cronProblems(expression);
      assert.ok(problems.length > 0, 'expected at least one problem');
      assert.ok(
        problems.some((p) => p.includes(fragment)),
        `expected a problem containing ${JSON.stringify(fragment)}, got ${JSON.stringify(problems)}`,
      );
    });
  }

  test('the brief\'s example message is produced verbatim', () => {
    assert.deepEqual(cronProblems('0 25 * * *'), ['cron field "hour" has 25, but it must be 0-23']);
  });

  test('reports every bad field, not just the first', () => {
    const problems = cronProblems('60 24 32 13 8');
    assert.equal(problems.length, 5);
    for (const name of ['minute', 'hour', 'day-of-month', 'month', 'day-of-week']) {
      assert.ok(problems.some((p) => p.includes(`"${name}"`)), `missing ${name} in ${JSON.stringify(problems)}`);
    }
  });
});

describe('timezoneProblems', () => {
  for (const tz of [undefined, 'UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo']) {
    test(`accepts ${String(tz)}`, () => {
      assert.deepEqual(timezoneProblems(tz), []);
    });
  }

  test('rejects an unknown zone with the documented message', () => {
    assert.deepEqual(timezoneProblems('Mars/Olympus'), [
      'timezone "Mars/Olympus" is not an IANA time zone such as "Europe/Berlin" or "UTC"',
    ]);
  });

  test('rejects an empty string and non-strings', () => {
    assert.equal(timezoneProblems('').length, 1);
    assert.match(timezoneProblems(42)[0]!, /must be a string/);
    assert.match(timezoneProblems(null)[0]!, /must be a string/);
  });

  test('rejects fixed offsets, which the server cannot load', () => {
    assert.match(timezoneProblems('+01:00')[0]!, /fixed UTC offset/);
  });

  test('rejects a wrongly cased name and gives the right spelling', () => {
    assert.match(timezoneProblems('europe/berlin')[0]!, /"Europe\/Berlin"/);
  });
});

describe('scheduleIdFor', () => {
  const safe = /^[a-z0-9-]+$/;

  test('is deterministic and readable', () => {
    const id = scheduleIdFor('Daily Report');
    assert.equal(id, scheduleIdFor('Daily Report'));
    assert.match(id, /^browserai-saved-daily-report-[0-9a-f]{8}$/);
  });

  test('pins the hash, so IDs stay stable across releases', () => {
    // FNV-1a 32-bit of "" is the offset basis; of "a" it is the published test vector.
    assert.equal(scheduleIdFor(''), 'browserai-saved-811c9dc5');
    assert.equal(scheduleIdFor('a'), 'browserai-saved-a-e40c292c');
  });

  test('matches a TextEncoder-based FNV-1a on non-ASCII input', () => {
    const name = '日本 レポート 🚀 café';
    let hash = 0x811c9dc5;
    for (const byte of new TextEncoder().encode(name)) hash = Math.imul(hash ^ byte, 0x01000193);
    const expected = (hash >>> 0).toString(16).padStart(8, '0');
    assert.ok(scheduleIdFor(name).endsWith(`-${expected}`));
  });

  test('differs by case even though the slug is the same', () => {
    const a = scheduleIdFor('Daily Report');
    const b = scheduleIdFor('daily report');
    assert.notEqual(a, b);
    assert.equal(a.slice(0, -8), b.slice(0, -8));
  });

  test('differs for names that slug alike', () => {
    assert.notEqual(scheduleIdFor('daily-report'), scheduleIdFor('daily report'));
  });

  test('gives unicode names a unique, safe ID', () => {
    const a = scheduleIdFor('日本 レポート');
    const b = scheduleIdFor('日本 レポート 2');
    assert.match(a, /^browserai-saved-[0-9a-f]{8}$/);
    assert.match(b, /^browserai-saved-2-[0-9a-f]{8}$/);
    assert.notEqual(a, scheduleIdFor('中国 レポート'));
    assert.match(scheduleIdFor('Café — Überblick!'), /^browserai-saved-caf-berblick-[0-9a-f]{8}$/);
  });

  test('bounds the length and uses only [a-z0-9-], without doubled or trailing dashes', () => {
    const names = [
      'x'.repeat(500),
      'Quarterly   report: revenue / costs (EU + US) — final!!! v2'.repeat(3),
      `${'a'.repeat(39)} b`,
      '--- leading and trailing ---',
      '!!!',
      '',
      '\ud800 lone surrogate',
    ];
    for (const name of names) {
      const id = scheduleIdFor(name);
      assert.match(id, safe, id);
      assert.ok(id.length <= 'browserai-saved-'.length + 40 + 1 + 8, id);
      assert.ok(!id.includes('--'), id);
      assert.ok(!id.endsWith('-'), id);
    }
    assert.equal(scheduleIdFor('x'.repeat(500)), `browserai-saved-${'x'.repeat(40)}-${scheduleIdFor('x'.repeat(500)).slice(-8)}`);
  });
});

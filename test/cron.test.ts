// Saved-task schedules: cron validation (croner plus the limits of Temporal's cron dialect),
// time zone validation and the deterministic schedule ID.
// Unit tests: no Temporal server.

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
    '0 9 * * mon-fri',
    '5/10 * * * *',
    '0-30/5 0-23/2 1-31/3 1-12/6 0-7/1',
    '  0   12 * * *  ',
    '59 23 31 12 6',
    '0 0 * jan-dec sun-sat',
    // N/S runs from N to the field's maximum, as Temporal reads it; names take steps too.
    '0 0 * * SUN/2',
    '0 0 * JAN/2 *',
    '0 0 * * MON-7',
    // Rare but real dates: Temporal and croner both require day-of-month AND day-of-week.
    '0 0 29 2 *',
    '0 0 13 * FRI',
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
    ['*/0 * * * *', 'cron field "minute" has step 0 in "*/0", but a step must be a whole number from 1 to 60'],
    ['*/61 * * * *', 'has step 61 in "*/61", but a step must be a whole number from 1 to 60'],
    ['0 0 * * FOO', 'cron field "day-of-week" has "FOO", but it must be 0-7 (0 and 7 are Sunday) or SUN-SAT'],
    ['@every 5m', 'uses @every, which is not supported'],
    ['0 0 0 * * * *', 'has 7 fields, but only 5 fields'],
    ['0 0 * * * *', 'has 6 fields, but only 5 fields'],
    // Croner would read this as 09:00 daily; Temporal as midnight on the 9th. Neither is safe.
    ['0 0 9 * * *', 'seconds and years fields are not'],
    ['', 'cron expression is empty'],
    ['   ', 'cron expression is empty'],
    [42, 'cron expression must be a string'],
    [undefined, 'cron expression must be a string'],
    [null, 'but it is null'],
    ['@reboot', '"@reboot" is not supported'],
    ['@fortnightly', 'is not a supported shorthand'],
    // Temporal matches shorthands exactly and refuses "@DAILY".
    ['@DAILY', 'cron expression "@DAILY" must be written in lower case, as "@daily"'],
    ['0 25 * * *', 'cron field "hour" has 25, but it must be 0-23'],
    ['0 0 * 13 *', 'cron field "month" has 13, but it must be 1-12 or JAN-DEC'],
    ['0 0 * * 8', 'cron field "day-of-week" has 8'],
    ['0 0 * FOO *', 'cron field "month" has "FOO", but it must be 1-12 or JAN-DEC'],
    ['0 0 * janu *', 'cron field "month" has "janu", but each entry must be *, N, N-M'],
    ['5-70 * * * *', 'cron field "minute" has "5-70", but its values must be 0-59'],
    ['70/5 * * * *', 'cron field "minute" has "70/5", but its values must be 0-59'],
    ['MON * * * *', 'cron field "minute" has "MON", but it must be 0-59'],
    ['1,,2 * * * *', 'cron field "minute" has an empty entry'],
    [
      '*/x * * * *',
      'cron field "minute" has "*/x", but each entry must be *, N, N-M, */S, N/S or N-M/S with N and M in 0-59',
    ],
    ['1/2/3 * * * *', 'has "1/2/3", but each entry must be'],
    ['/5 * * * *', 'has "/5", but each entry must be'],
    // Croner's AND marker; Temporal would read it as plain 5.
    ['0 0 * * +5', 'has "+5", but each entry must be'],
    // Croner accepts these Quartz extensions; Temporal refuses them, or reads 5#3 as every Friday.
    ['0 0 L * *', '?, L, W and # are not supported'],
    ['0 0 1W * *', '?, L, W and # are not supported'],
    ['0 0 ? * *', '?, L, W and # are not supported'],
    ['0 0 * * 5L', '?, L, W and # are not supported'],
    ['0 0 * * 5#3', '?, L, W and # are not supported'],
    ['0 0 * * FRI-MON', 'use a comma list for ranges that wrap around'],
    ['0 0 * DEC-JAN *', 'cron field "month" has range "DEC-JAN", but a range must be ascending'],
    // Croner reads a closing SUN as 7, Temporal as 0.
    ['0 0 * * MON-SUN', 'a range cannot end on SUN, which is 0; end it on 7 instead, as in "MON-7"'],
    ['0 0 30 2 *', 'matches no date, so the schedule would never run'],
    ['0 0 31 2 MON', 'matches no date'],
    ['CRON_TZ=Europe/Berlin 0 9 * * *', "set the schedule's timezone instead"],
    ['TZ=UTC @daily', "set the schedule's timezone instead"],
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

  test("the brief's example message is produced verbatim", () => {
    assert.deepEqual(cronProblems('0 25 * * *'), ['cron field "hour" has 25, but it must be 0-23']);
  });

  test('reports every bad field, not just the first', () => {
    const problems = cronProblems('60 24 32 13 8');
    assert.equal(problems.length, 5);
    for (const name of ['minute', 'hour', 'day-of-month', 'month', 'day-of-week']) {
      assert.ok(
        problems.some((p) => p.includes(`"${name}"`)),
        `missing ${name} in ${JSON.stringify(problems)}`,
      );
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
    // The first 8 hex digits of SHA-256 over the UTF-8 name (vectors from Python's hashlib).
    assert.equal(scheduleIdFor(''), 'browserai-saved-e3b0c442');
    assert.equal(scheduleIdFor('a'), 'browserai-saved-a-ca978112');
    assert.equal(scheduleIdFor('Daily Report'), 'browserai-saved-daily-report-a64593f0');
    assert.equal(scheduleIdFor('日本 レポート 🚀 café'), 'browserai-saved-caf-4ab822c6');
  });

  test('hashes the exact name, without Unicode normalisation', () => {
    assert.equal(scheduleIdFor('caf\u00e9'), 'browserai-saved-caf-850f7dc4');
    assert.equal(scheduleIdFor('cafe\u0301'), 'browserai-saved-cafe-81ef060b');
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
    assert.equal(
      scheduleIdFor('x'.repeat(500)),
      `browserai-saved-${'x'.repeat(40)}-${scheduleIdFor('x'.repeat(500)).slice(-8)}`,
    );
  });
});

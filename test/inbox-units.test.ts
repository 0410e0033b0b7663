// The inbox's pure parts: finding the code in a message, the normal form and the mask of an
// address, and the providers' signatures (Twilio's against the example of its own libraries).
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  codeRecipientProblems,
  maskedAddress,
  normalAddress,
  normalSender,
  senderCounts,
} from '../src/contract/code-recipient';
import { codePattern, findCode } from '../src/inbox/code-in-text';
import { mailgunSignature, readMailgun } from '../src/inbox/mailgun';
import { readTwilio, twilioSignature } from '../src/inbox/twilio';

describe('the code in a message', () => {
  const cases: Array<[string, ReturnType<typeof findCode>]> = [
    ['Your GitHub authentication code is 482913.', { code: '482913' }],
    ['G-482913 is your Google verification code.', { code: '482913' }],
    ['Use OTP 4829 to log in. Valid 10 minutes. Ref 2024-05-01', { code: '4829' }],
    ['Your code: 482 913', { code: '482913' }],
    ['Verification code\n\n731904\n\nIf you did not ask for it, ignore this email.', { code: '731904' }],
    ['Code 4821 expires in 600 seconds', { code: '4821' }],
    // Not codes: a price, a phone number, a longer number, a date; nothing near a code word.
    ['Your code is 482913. Call +1 415 555 0100 if this was not you', { code: '482913' }],
    ['Order 48291377 shipped, total $1,482.50', { refused: 'no-code' }],
    ['Your login link: https://example.com/l/abc', { refused: 'no-code' }],
    ['Your code is 482913 or 551100', { refused: 'several-codes' }],
  ];
  for (const [text, expected] of cases) test(JSON.stringify(text), () => assert.deepEqual(findCode(text), expected));

  test('a project pattern: its first group, every match counted', () => {
    const pattern = codePattern('shop', 'ref ([A-Z0-9]{6})');
    assert.deepEqual(findCode('Shop: ref X7K9P2 to sign in', pattern), { code: 'X7K9P2' });
    assert.deepEqual(findCode('ref X7K9P2 ref Y7K9P2', pattern), { refused: 'several-codes' });
    assert.throws(() => codePattern('shop', '('), /not a regular expression/);
    assert.throws(() => codePattern('shop', 'x*'), /empty text/);
  });
});

describe('addresses', () => {
  test('normal forms: E.164 without separators, email in lower case; anything else refused', () => {
    assert.equal(normalAddress('+1 (415) 555-0101'), '+14155550101');
    assert.equal(normalAddress(' Codes+T1@Inbox.Example.com '), 'codes+t1@inbox.example.com');
    assert.equal(normalAddress('4155550101'), null, 'no country code');
    assert.equal(normalAddress('not an address'), null);
    assert.equal(normalSender('GitHub'), 'github');
    assert.equal(normalSender('@GitHub.com'), '@github.com');
    assert.ok(senderCounts(['@github.com'], 'noreply@github.com'));
    assert.ok(!senderCounts(['github'], '+18005550199'));
    assert.ok(senderCounts(undefined, 'anyone'));
  });

  test('masked: enough to tell which, not enough to read it', () => {
    assert.equal(maskedAddress('+14155550101'), '+14•••••••01');
    assert.equal(maskedAddress('codes+t1@inbox.example.com'), 'c•••@inbox.example.com');
  });

  test('a codeRecipient is checked field by field', () => {
    assert.deepEqual(codeRecipientProblems({ address: '+14155550101', senders: ['GitHub', '@github.com'] }), []);
    assert.match(codeRecipientProblems({ address: '4155550101' }).join(), /E\.164/);
    assert.match(codeRecipientProblems({ address: 'a@b.co', to: 'x' }).join(), /no field "to"/);
    assert.match(codeRecipientProblems({ address: 'a@b.co', senders: ['<bad>'] }).join(), /senders\[0\]/);
  });
});

describe('provider signatures', () => {
  test("Twilio's: its libraries' example request verifies, and a changed parameter does not", () => {
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    const params = new URLSearchParams({
      CallSid: 'CA1234567890ABCDE',
      Caller: '+14158675310',
      Digits: '1234',
      From: '+14158675310',
      To: '+18005551212',
    });
    assert.equal(twilioSignature('12345', url, params), 'GvWf1cFY/Q7PnoempGyD5oXAezc=');
    const sms = new URLSearchParams({ MessageSid: 'SM1', From: '+14158675310', To: '+18005551212', Body: 'code 4829' });
    const signature = twilioSignature('12345', url, sms);
    assert.ok('messageId' in readTwilio(Buffer.from(sms.toString()), signature, url, '12345'));
    // Twilio may sign with the standard port written out.
    const withPort = twilioSignature('12345', 'https://mycompany.com:443/myapp.php?foo=1&bar=2', sms);
    assert.ok('messageId' in readTwilio(Buffer.from(sms.toString()), withPort, url, '12345'));
    sms.set('Body', 'code 9999');
    assert.deepEqual(
      (readTwilio(Buffer.from(sms.toString()), signature, url, '12345') as { status: number }).status,
      401,
    );
  });

  test("Mailgun's: signed and fresh, or 401", async () => {
    const now = 1_700_000_000_000;
    const form = (timestamp: number, key = 'key') => {
      const token = 'a'.repeat(50);
      return new URLSearchParams({
        timestamp: String(timestamp),
        token,
        signature: mailgunSignature(key, String(timestamp), token),
        recipient: 'codes@inbox.example.com',
        from: 'GitHub <noreply@github.com>',
        'Message-Id': '<m1@github.com>',
        subject: 'Your code',
        'stripped-text': 'Verification code: 731904',
      }).toString();
    };
    const read = (body: string) => readMailgun(Buffer.from(body), 'application/x-www-form-urlencoded', 'key', now);
    assert.deepEqual(await read(form(now / 1000)), {
      messageId: 'mailgun:<m1@github.com>',
      to: 'codes@inbox.example.com',
      from: 'noreply@github.com',
      text: 'Your code\nVerification code: 731904',
    });
    assert.equal(((await read(form(now / 1000, 'other'))) as { status: number }).status, 401);
    assert.equal(((await read(form(now / 1000 - 600))) as { status: number }).status, 401, 'stale');
  });
});

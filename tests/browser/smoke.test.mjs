import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, BASE_URL } from './lib.mjs';

test('the index page lists the MMLU paper', async () => {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.goto(BASE_URL + '/');
    assert.ok(await page.getByRole('link', { name: /Measuring Massive Multitask/ }).isVisible());
  } finally {
    await browser.close();
  }
});

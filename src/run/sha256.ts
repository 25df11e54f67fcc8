/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, in JavaScript, for the
 * stable ids of ids.ts. Why not node:crypto: an id hashes ~60 bytes (one
 * block), where a call into OpenSSL costs ~1 µs of setup, conversion and
 * Buffer allocation around a few hundred nanoseconds of hashing; span
 * conversion makes one id per span. Checked against node:crypto in
 * test/run/sha256.test.ts.
 */

/** Round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** The message schedule and the state, reused by every call (hashing is synchronous). */
const W = new Int32Array(64);
const H = new Int32Array(8);

/** Bytes of the padded message, grown when a longer one comes. */
let buf = new Uint8Array(256);

/** Any character past ASCII (then the string is encoded as UTF-8 first). */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * The digest of `text` (as UTF-8) as eight big-endian 32-bit words, in a
 * reused array: read it before the next call.
 */
export function sha256(text: string): Int32Array {
  let len: number;
  if (NON_ASCII.test(text)) {
    const bytes = Buffer.from(text, "utf8");
    len = bytes.length;
    ensure(len);
    buf.set(bytes);
  } else {
    len = text.length;
    ensure(len);
    for (let i = 0; i < len; i++) buf[i] = text.charCodeAt(i);
  }
  // Padding: a 1 bit, zeros, then the length in bits as a 64-bit big-endian number.
  const total = (((len + 8) >> 6) + 1) << 6;
  buf[len] = 0x80;
  buf.fill(0, len + 1, total - 8);
  const bits = len * 8;
  const hi = Math.floor(bits / 2 ** 32);
  buf[total - 8] = hi >>> 24;
  buf[total - 7] = hi >>> 16;
  buf[total - 6] = hi >>> 8;
  buf[total - 5] = hi;
  buf[total - 4] = bits >>> 24;
  buf[total - 3] = bits >>> 16;
  buf[total - 2] = bits >>> 8;
  buf[total - 1] = bits;

  H[0] = 0x6a09e667;
  H[1] = 0xbb67ae85 | 0;
  H[2] = 0x3c6ef372;
  H[3] = 0xa54ff53a | 0;
  H[4] = 0x510e527f;
  H[5] = 0x9b05688c | 0;
  H[6] = 0x1f83d9ab;
  H[7] = 0x5be0cd19;
  for (let off = 0; off < total; off += 64) block(off);
  return H;
}

function ensure(len: number): void {
  if (len + 72 > buf.length) buf = new Uint8Array(Math.max(buf.length * 2, len + 72));
}

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

function block(off: number): void {
  for (let i = 0; i < 16; i++) {
    const j = off + i * 4;
    W[i] = (buf[j]! << 24) | (buf[j + 1]! << 16) | (buf[j + 2]! << 8) | buf[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15]!;
    const w2 = W[i - 2]!;
    const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
    const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let f = H[5]!;
  let g = H[6]!;
  let h = H[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + K[i]! + W[i]!) | 0;
    const S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}

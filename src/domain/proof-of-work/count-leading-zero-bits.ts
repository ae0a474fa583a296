/** How many zero bits a byte string begins with (0 to 8 × length). */
export function countLeadingZeroBits(bytes: Uint8Array): number {
  let count = 0
  for (const byte of bytes) {
    if (byte === 0) {
      count += 8
      continue
    }
    // Math.clz32 counts over 32 bits; a byte occupies the lowest 8 of them.
    return count + Math.clz32(byte) - 24
  }
  return count
}

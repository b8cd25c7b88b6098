package record

// Bytes that a JSON string holds as they are: printable ASCII other than
// '"' and '\\'. plainPrefix finds the run of them at the start of a text
// eight bytes at a time, for the inner loops of the string encoder
// (appendString) and of argsHash (plainString): most of a record's text is
// such bytes.
const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// plainWord reports whether the 8 bytes of x are all printable ASCII other
// than '"' and '\\'. Each term has a byte's high bit set for some byte
// exactly when some byte matches (the has-less-than and has-zero bit
// tricks; a borrow only reaches bytes above one that matches): less for a
// byte below 0x20 (among bytes below 0x80), quote and backslash for those
// bytes, and x itself for a byte at or above 0x80.
func plainWord(x uint64) bool {
	less := (x - 0x20*swarOnes) &^ x
	q := x ^ ('"' * swarOnes)
	quote := (q - swarOnes) &^ q
	bs := x ^ ('\\' * swarOnes)
	backslash := (bs - swarOnes) &^ bs
	return (less|quote|backslash|x)&swarHigh == 0
}

// plainPrefix returns the length of a prefix of s, a multiple of 8, whose
// bytes are all plain (plainWord). The bytes after it are left to a
// byte-wise loop: it may stop up to 7 bytes before the first byte that is
// not plain.
func plainPrefix[S string | []byte](s S) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if !plainWord(x) {
			break
		}
	}
	return i
}

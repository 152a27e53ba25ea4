// Package z85 is ZeroMQ's Z85 encoding (rfc.zeromq.org/spec/32): four
// bytes as five printable characters, the form in which libzmq, pyzmq,
// ZMQ::FFI and curve_keygen read and print CURVE keys. A CURVE key is 32
// bytes, 40 characters.
package z85

import (
	"encoding/binary"
	"fmt"
)

// KeyLen is the length of a CURVE key in Z85.
const KeyLen = 40

const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// decodeTable maps a character to its digit plus one; 0 marks a character
// outside the alphabet.
var decodeTable = func() (t [256]byte) {
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i + 1)
	}
	return t
}()

// Encode returns the Z85 text of b, whose length must be a multiple of 4.
func Encode(b []byte) (string, error) {
	if len(b)%4 != 0 {
		return "", fmt.Errorf("z85: %d bytes is not a multiple of 4", len(b))
	}
	out := make([]byte, 0, len(b)/4*5)
	for i := 0; i < len(b); i += 4 {
		v := binary.BigEndian.Uint32(b[i:])
		var d [5]byte
		for j := 4; j >= 0; j-- {
			d[j] = alphabet[v%85]
			v /= 85
		}
		out = append(out, d[:]...)
	}
	return string(out), nil
}

// Decode returns the bytes of the Z85 text s. It refuses a length that is
// not a multiple of 5, a character outside the Z85 alphabet and a group of
// five characters worth more than 32 bits.
func Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("z85: %d characters is not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := 0; j < 5; j++ {
			c := s[i+j]
			d := decodeTable[c]
			if d == 0 {
				return nil, fmt.Errorf("z85: character %q at offset %d is not in the Z85 alphabet", c, i+j)
			}
			v = v*85 + uint64(d-1)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("z85: the group at offset %d is out of range", i)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(v))
	}
	return out, nil
}

// DecodeKey decodes a CURVE key: exactly KeyLen Z85 characters. Its
// errors never quote the text, which may be a secret key.
func DecodeKey(s string) ([32]byte, error) {
	var key [32]byte
	if len(s) != KeyLen {
		return key, fmt.Errorf("a CURVE key is %d Z85 characters, not %d", KeyLen, len(s))
	}
	b, err := Decode(s)
	if err != nil {
		// Decode's errors name a character of s: say where only.
		for i := 0; i < len(s); i++ {
			if decodeTable[s[i]] == 0 {
				return key, fmt.Errorf("a CURVE key is %d Z85 characters: the character at offset %d is not in the Z85 alphabet", KeyLen, i)
			}
		}
		return key, fmt.Errorf("a CURVE key is %d Z85 characters: it does not decode (a group is out of range)", KeyLen)
	}
	copy(key[:], b)
	return key, nil
}

// EncodeKey returns the Z85 text of a CURVE key.
func EncodeKey(key [32]byte) string {
	s, _ := Encode(key[:])
	return s
}

package z85

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRFC32Example(t *testing.T) {
	b := []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}
	s, err := Encode(b)
	require.NoError(t, err)
	assert.Equal(t, "HelloWorld", s)
	got, err := Decode("HelloWorld")
	require.NoError(t, err)
	assert.Equal(t, b, got)
}

// libzmq's test keys (zmq_curve(7), tests/testutil_security.hpp): the
// pairs decode, and encode back to the same text.
func TestLibzmqKeys(t *testing.T) {
	for _, k := range []string{
		"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID",
		"D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs",
		"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7",
		"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6",
	} {
		key, err := DecodeKey(k)
		require.NoError(t, err, k)
		assert.Equal(t, k, EncodeKey(key))
	}
}

func TestRoundTrip(t *testing.T) {
	b, _ := hex.DecodeString("00000000ffffffff0102030405060708")
	s, err := Encode(b)
	require.NoError(t, err)
	got, err := Decode(s)
	require.NoError(t, err)
	assert.Equal(t, b, got)
	empty, err := Decode("")
	require.NoError(t, err)
	assert.Empty(t, empty)
}

func TestRejects(t *testing.T) {
	_, err := Encode([]byte{1, 2, 3})
	assert.ErrorContains(t, err, "not a multiple of 4")
	_, err = Decode("Hello")
	require.NoError(t, err)
	_, err = Decode("Hell")
	assert.ErrorContains(t, err, "not a multiple of 5")
	_, err = Decode("Hell~")
	assert.ErrorContains(t, err, "not in the Z85 alphabet")
	_, err = Decode("#####") // 85^5-1 > 2^32-1
	assert.ErrorContains(t, err, "out of range")

	_, err = DecodeKey("Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hI")
	assert.EqualError(t, err, "a CURVE key is 40 Z85 characters, not 39")
	_, err = DecodeKey("Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hI\"")
	assert.EqualError(t, err, "a CURVE key is 40 Z85 characters: the character at offset 39 is not in the Z85 alphabet")
	_, err = DecodeKey("#####w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID")
	assert.ErrorContains(t, err, "out of range")
	// The error never quotes the key.
	assert.NotContains(t, err.Error(), "fVvi")
}

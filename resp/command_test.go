package resp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendCommandAndLen(t *testing.T) {
	for _, argv := range [][][]byte{
		{[]byte("PING")},
		{[]byte("SET"), []byte("k"), []byte("")},
		{[]byte("SET"), []byte("key:123"), make([]byte, 12345)},
	} {
		b := AppendCommand(nil, argv...)
		assert.EqualValues(t, len(b), CommandLen(argv))
	}
	assert.Equal(t, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", string(AppendCommand(nil, []byte("SET"), []byte("k"), []byte(""))))
	assert.Equal(t, "*2\r\n$6\r\nSELECT\r\n$2\r\n15\r\n", string(AppendSelect(nil, 15)))
}

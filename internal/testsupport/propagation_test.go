package testsupport

import "testing"

func TestSamePropagation(t *testing.T) {
	for _, tc := range []struct {
		a, b []string
		same bool
	}{
		{[]string{"SET k v"}, []string{"SET k v"}, true},
		{[]string{"SET k v"}, []string{"SET k w"}, false},
		{[]string{"SET k v"}, []string{"SET k v", "DEL k"}, false},
		{[]string{"SET k v PXAT 100000"}, []string{"SET k v PXAT 101500"}, true},
		{[]string{"SET k v PXAT 100000"}, []string{"SET k v PXAT 103000"}, false},
		{[]string{"PEXPIREAT k 100000"}, []string{"PEXPIREAT k 99000"}, true},
		{[]string{"SREM s a"}, []string{"SREM s b"}, true},
		{[]string{"srem s a"}, []string{"srem s b"}, false},
	} {
		if got := SamePropagation(tc.a, tc.b); got != tc.same {
			t.Errorf("SamePropagation(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

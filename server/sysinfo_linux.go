package server

import "syscall"

// osName is INFO's os field: kernel name, release and machine, as
// uname(2) reports them.
func osName() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return "Linux"
	}
	str := func(a [65]int8) string {
		b := make([]byte, 0, len(a))
		for _, c := range a {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		return string(b)
	}
	return str(u.Sysname) + " " + str(u.Release) + " " + str(u.Machine)
}

// totalSystemMemory is the machine's physical memory in bytes.
func totalSystemMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

package scripting

// lrand48 is Redis's redisLrand48 (rand.c): the 48-bit linear
// congruential generator of lrand48, started from its default seed and
// never reseeded but by math.randomseed, so that scripts get the same
// sequence of math.random on every platform and every start.
type lrand48 struct{ x uint64 }

const (
	lrandA    = 0x5DEECE66D
	lrandC    = 0xB
	lrandMask = 1<<48 - 1
)

// reset puts the generator in its state at start-up.
func (r *lrand48) reset() { r.x = 0x1234ABCD330E }

// seed is redisSrand48.
func (r *lrand48) seed(s int32) {
	u := uint32(s)
	r.x = uint64(u>>16)<<32 | uint64(u&0xffff)<<16 | 0x330E
}

// next is redisLrand48: the next 31-bit value.
func (r *lrand48) next() int32 {
	r.x = (lrandA*r.x + lrandC) & lrandMask
	return int32(r.x >> 17)
}

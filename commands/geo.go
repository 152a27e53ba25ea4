package commands

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"sync"

	"github.com/zredis/zredis/engine"
	"github.com/zredis/zredis/keyspace"
)

// Geo: GEOADD GEODIST GEOHASH GEOPOS GEOSEARCH GEOSEARCHSTORE GEORADIUS
// GEORADIUSBYMEMBER and their _RO forms (Redis geo.c, geohash.c,
// geohash_helper.c), on sorted sets whose scores are 52-bit geohashes
// (26 steps of interleaved longitude and latitude bits over -180..180
// and -85.05112878..85.05112878), computed as Redis does, so that the
// same input gives the same scores, and distances (haversine on a
// 6372797.560856 m sphere) to the digits Redis prints.
func init() {
	const geo = "@geo"
	register(
		&engine.Command{Name: "geoadd", Arity: -5, Flags: engine.Write | engine.DenyOOM, ACL: "@write " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: geoaddCommand},
		&engine.Command{Name: "geodist", Arity: -4, Flags: engine.ReadOnly, ACL: "@read " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: geodistCommand},
		&engine.Command{Name: "geohash", Arity: -2, Flags: engine.ReadOnly, ACL: "@read " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: geohashCommand},
		&engine.Command{Name: "geopos", Arity: -2, Flags: engine.ReadOnly, ACL: "@read " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: geoposCommand},
		&engine.Command{Name: "georadius", Arity: -6, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: georadiusCommand, Keys: georadiusKeys(6), KeyFlags: georadiusKeyFlags},
		&engine.Command{Name: "georadius_ro", Arity: -6, Flags: engine.ReadOnly, ACL: "@read " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: georadiusRoCommand},
		&engine.Command{Name: "georadiusbymember", Arity: -5, Flags: engine.Write | engine.DenyOOM | engine.MovableKeys, ACL: "@write " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: georadiusbymemberCommand, Keys: georadiusKeys(5), KeyFlags: georadiusKeyFlags},
		&engine.Command{Name: "georadiusbymember_ro", Arity: -5, Flags: engine.ReadOnly, ACL: "@read " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: georadiusbymemberRoCommand},
		&engine.Command{Name: "geosearch", Arity: -7, Flags: engine.ReadOnly, ACL: "@read " + geo + " @slow", FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "geo", Run: geosearchCommand},
		&engine.Command{Name: "geosearchstore", Arity: -8, Flags: engine.Write | engine.DenyOOM, ACL: "@write " + geo + " @slow", FirstKey: 1, LastKey: 2, KeyStep: 1, Group: "geo", Run: geosearchstoreCommand, KeyFlags: geosearchstoreKeyFlags},
	)
}

// georadiusKeys are GEORADIUS's keys as its key specs find them: the key
// searched, then the argument after the first STORE, then the one after
// the first STOREDIST, each keyword looked for from argument from on.
func georadiusKeys(from int) func(args [][]byte) []int {
	return func(args [][]byte) []int {
		keys := []int{1}
		for _, kw := range []string{"store", "storedist"} {
			for i := from; i < len(args)-1; i++ {
				if engine.EqualFold(args[i], kw) {
					keys = append(keys, i+1)
					break
				}
			}
		}
		return keys
	}
}

func georadiusKeyFlags(_ [][]byte, pos int) []string {
	if pos == 1 {
		return sortKeyFlagsRead
	}
	return sortKeyFlagsStore
}

func geosearchstoreKeyFlags(_ [][]byte, pos int) []string {
	if pos == 1 {
		return sortKeyFlagsStore
	}
	return sortKeyFlagsRead
}

// The geohash ranges and constants (geohash.h, geohash_helper.c).
const (
	geoStepMax  = 26
	geoLatMin   = -85.05112878
	geoLatMax   = 85.05112878
	geoLongMin  = -180.0
	geoLongMax  = 180.0
	earthRadius = 6372797.560856
	mercatorMax = 20037726.37
	degToRad    = math.Pi / 180.0
)

type ghRange struct{ min, max float64 }

type ghBits struct {
	bits uint64
	step uint
}

type ghArea struct {
	hash     ghBits
	lon, lat ghRange
}

var (
	wgsLong = ghRange{geoLongMin, geoLongMax}
	wgsLat  = ghRange{geoLatMin, geoLatMax}
)

func interleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	for i := 4; i >= 0; i-- {
		x = (x | x<<s[i]) & b[i]
		y = (y | y<<s[i]) & b[i]
	}
	return x | y<<1
}

func deinterleave64(v uint64) uint64 {
	x, y := v, v>>1
	x &= 0x5555555555555555
	y &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	y = (y | y>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	y = (y | y>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	y = (y | y>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	y = (y | y>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	y = (y | y>>16) & 0x00000000FFFFFFFF
	return x | y<<32
}

// geohashEncode is geohashEncode: false outside the ranges or the WGS84
// limits.
func geohashEncode(lonR, latR ghRange, lon, lat float64, step uint) (ghBits, bool) {
	if step > 32 || step == 0 || lon > geoLongMax || lon < geoLongMin || lat > geoLatMax || lat < geoLatMin {
		return ghBits{}, false
	}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return ghBits{step: step}, false
	}
	latOff := (lat - latR.min) / (latR.max - latR.min)
	lonOff := (lon - lonR.min) / (lonR.max - lonR.min)
	latOff *= float64(uint64(1) << step)
	lonOff *= float64(uint64(1) << step)
	return ghBits{bits: interleave64(uint32(latOff), uint32(lonOff)), step: step}, true
}

// geohashDecode is geohashDecode: the area a hash covers.
func geohashDecode(lonR, latR ghRange, h ghBits) (ghArea, bool) {
	if h.bits == 0 && h.step == 0 {
		return ghArea{}, false
	}
	sep := deinterleave64(h.bits)
	latScale, lonScale := latR.max-latR.min, lonR.max-lonR.min
	ilat, ilon := uint32(sep), uint32(sep>>32)
	div := float64(uint64(1) << h.step)
	return ghArea{
		hash: h,
		lat:  ghRange{latR.min + (float64(ilat)*1.0/div)*latScale, latR.min + (float64(uint64(ilat)+1)*1.0/div)*latScale},
		lon:  ghRange{lonR.min + (float64(ilon)*1.0/div)*lonScale, lonR.min + (float64(uint64(ilon)+1)*1.0/div)*lonScale},
	}, true
}

// decodeGeohash is decodeGeohash: a score's longitude and latitude, the
// centre of its 26-step area, clamped to the WGS84 limits. It is
// geohashDecode's arithmetic for the WGS84 ranges at step 26 with its
// constants folded, operation for operation (dividing by 2^26 and
// multiplying by 2^-26 are the same exact scaling): GEOSEARCH decodes
// every point of its boxes, and the general decoding was a third of
// its time.
func decodeGeohash(score float64) ([2]float64, bool) {
	bits := uint64(score)
	const (
		scale    = 1.0 / (1 << geoStepMax)
		latScale = geoLatMax - geoLatMin
		lonScale = geoLongMax - geoLongMin
	)
	sep := deinterleave64(bits)
	ilat, ilon := uint32(sep), uint32(sep>>32)
	latMin := geoLatMin + (float64(ilat)*scale)*latScale
	latMax := geoLatMin + (float64(uint64(ilat)+1)*scale)*latScale
	lonMin := geoLongMin + (float64(ilon)*scale)*lonScale
	lonMax := geoLongMin + (float64(uint64(ilon)+1)*scale)*lonScale
	lon := (lonMin + lonMax) / 2
	if lon < geoLongMin {
		lon = geoLongMin
	} else if lon > geoLongMax {
		lon = geoLongMax
	}
	lat := (latMin + latMax) / 2
	if lat < geoLatMin {
		lat = geoLatMin
	} else if lat > geoLatMax {
		lat = geoLatMax
	}
	return [2]float64{lon, lat}, true
}

// geoScore is the 52-bit score of a point (geohashEncodeWGS84 and
// geohashAlign52Bits).
func geoScore(lon, lat float64) uint64 {
	h, _ := geohashEncode(wgsLong, wgsLat, lon, lat, geoStepMax)
	return align52(h)
}

func align52(h ghBits) uint64 { return h.bits << (52 - h.step*2) }

// moveX and moveY step a hash one cell east or west (d > 0: east), north
// or south (d > 0: north) (geohash_move_x, geohash_move_y): the
// longitude bits are the odd ones, the latitude bits the even ones.
func moveX(h *ghBits, d int) { move(h, d, 0xaaaaaaaaaaaaaaaa) }
func moveY(h *ghBits, d int) { move(h, d, 0x5555555555555555) }

func move(h *ghBits, d int, mask uint64) {
	if d == 0 {
		return
	}
	v := h.bits & mask
	other := h.bits &^ mask
	zz := ^mask >> (64 - h.step*2)
	if d > 0 {
		v += zz + 1
	} else {
		v |= zz
		v -= zz + 1
	}
	v &= mask >> (64 - h.step*2)
	h.bits = v | other
}

// neighbours of h in Redis's order of the search: north, south, east,
// west, north-east, north-west, south-east, south-west.
func neighbours(h ghBits) [8]ghBits {
	var n [8]ghBits
	moves := [8][2]int{{0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}}
	for i, m := range moves {
		n[i] = h
		moveX(&n[i], m[0])
		moveY(&n[i], m[1])
	}
	return n
}

// geoShape is the area searched: a circle (radius) or a box (width and
// height), around xy, in units of conversion metres.
type geoShape struct {
	box                   bool
	xy                    [2]float64
	conversion            float64
	radius, width, height float64
	// Computed by prepare, once per search.
	cosLat  float64 // cos of the centre's latitude
	maxTerm float64 // a circle's haversine term of the radius, with outsideMargin; 0: no bound
	cosMin  float64 // a lower bound of cosLat*cos(lat) for the latitudes within the radius
}

func estimateSteps(rangeMeters, lat float64) uint {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint(min(max(step, 1), 26))
}

func (s *geoShape) boundingBox() [4]float64 {
	lon, lat := s.xy[0], s.xy[1]
	h, w := s.radius, s.radius
	if s.box {
		h, w = s.height/2, s.width/2
	}
	h *= s.conversion
	w *= s.conversion
	latDelta := h / earthRadius / degToRad
	top := w / earthRadius / math.Cos((lat+latDelta)*degToRad) / degToRad
	bottom := w / earthRadius / math.Cos((lat-latDelta)*degToRad) / degToRad
	var b [4]float64
	if lat < 0 {
		b[0], b[2] = lon-bottom, lon+bottom
	} else {
		b[0], b[2] = lon-top, lon+top
	}
	b[1], b[3] = lat-latDelta, lat+latDelta
	return b
}

// searchAreas is geohashCalculateAreasByShapeWGS84: the hash box around
// the centre and its eight neighbours (zero where not needed), in the
// order they are searched.
func (s *geoShape) searchAreas() [9]ghBits {
	b := s.boundingBox()
	minLon, minLat, maxLon, maxLat := b[0], b[1], b[2], b[3]
	lon, lat := s.xy[0], s.xy[1]
	radius := s.radius
	if s.box {
		radius = math.Sqrt((s.width/2)*(s.width/2) + (s.height/2)*(s.height/2))
	}
	radius *= s.conversion
	steps := estimateSteps(radius, lat)
	hash, _ := geohashEncode(wgsLong, wgsLat, lon, lat, steps)
	n := neighbours(hash)
	area, _ := geohashDecode(wgsLong, wgsLat, hash)
	north, _ := geohashDecode(wgsLong, wgsLat, n[0])
	south, _ := geohashDecode(wgsLong, wgsLat, n[1])
	east, _ := geohashDecode(wgsLong, wgsLat, n[2])
	west, _ := geohashDecode(wgsLong, wgsLat, n[3])
	if steps > 1 && (north.lat.max < maxLat || south.lat.min > minLat || east.lon.max < maxLon || west.lon.min > minLon) {
		steps--
		hash, _ = geohashEncode(wgsLong, wgsLat, lon, lat, steps)
		n = neighbours(hash)
		area, _ = geohashDecode(wgsLong, wgsLat, hash)
	}
	if steps >= 2 {
		zero := func(idx ...int) {
			for _, i := range idx {
				n[i] = ghBits{}
			}
		}
		const nN, nS, nE, nW, nNE, nNW, nSE, nSW = 0, 1, 2, 3, 4, 5, 6, 7
		if area.lat.min < minLat {
			zero(nS, nSW, nSE)
		}
		if area.lat.max > maxLat {
			zero(nN, nNE, nNW)
		}
		if area.lon.min < minLon {
			zero(nW, nSW, nNW)
		}
		if area.lon.max > maxLon {
			zero(nE, nSE, nNE)
		}
	}
	return [9]ghBits{hash, n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]}
}

func latDistance(lat1, lat2 float64) float64 {
	return earthRadius * math.Abs(lat2*degToRad-lat1*degToRad)
}

// geoDistance is geohashGetDistance (haversine).
func geoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := lon1*degToRad, lon2*degToRad
	v := math.Sin((lon2r - lon1r) / 2)
	if v == 0 {
		return latDistance(lat1, lat2)
	}
	lat1r, lat2r := lat1*degToRad, lat2*degToRad
	u := math.Sin((lat2r - lat1r) / 2)
	a := u*u + math.Cos(lat1r)*math.Cos(lat2r)*v*v
	return 2.0 * earthRadius * math.Asin(math.Sqrt(a))
}

// fromCentre is geoDistance from the centre to (lon, lat), with the
// centre's cosine computed once per search: the same operations in the
// same order, so the same result to the last bit.
func (s *geoShape) fromCentre(lon, lat float64) float64 {
	lon1r, lon2r := s.xy[0]*degToRad, lon*degToRad
	v := math.Sin((lon2r - lon1r) / 2)
	if v == 0 {
		return latDistance(s.xy[1], lat)
	}
	lat1r, lat2r := s.xy[1]*degToRad, lat*degToRad
	u := math.Sin((lat2r - lat1r) / 2)
	a := u*u + s.cosLat*math.Cos(lat2r)*v*v
	return 2.0 * earthRadius * math.Asin(math.Sqrt(a))
}

// outsideMargin is the relative margin by which a point must be past
// the radius to be rejected before its exact distance: far more than
// the rounding of the few operations that differ from geoDistance's.
const outsideMargin = 1 + 1e-9

// prepare computes once per search what within reads for every point:
// the cosine of the centre's latitude and, for a circle, the haversine
// term of the radius and a lower bound of cos(lat1)*cos(lat2) over the
// band of latitudes within the radius.
func (s *geoShape) prepare() {
	lat1r := s.xy[1] * degToRad
	s.cosLat = math.Cos(lat1r)
	if s.box {
		return
	}
	r := s.radius * s.conversion
	if r >= math.Pi*earthRadius {
		return // past half the earth's circumference no term bounds it
	}
	h := math.Sin(r / (2 * earthRadius))
	s.maxTerm = h * h * outsideMargin
	band := r * (1 + 1e-6) / earthRadius
	lo, hi := max(lat1r-band, -math.Pi/2), min(lat1r+band, math.Pi/2)
	s.cosMin = s.cosLat * min(math.Cos(lo), math.Cos(hi)) * (1 - 1e-9)
}

// within reports whether a point is in the shape, and its distance from
// the centre (geoWithinShape), with the answer of geoWithinShape to the
// last bit. Most points of a search's boxes are outside a circle, and
// trigonometry was most of GEOSEARCH's time, so a point is rejected as
// cheaply as it can be shown to be outside by more than rounding: by
// latitude (Redis 7.2's geohashGetLatDistance test); then by a lower
// bound of the haversine term, x - x³/6 <= sin x for x >= 0 and the
// band's smallest cosine; then by the term itself, which also gives
// the distance of a point inside.
func (s *geoShape) within(xy [2]float64) (float64, bool) {
	if s.box {
		w, h := s.width*s.conversion, s.height*s.conversion
		if latDistance(xy[1], s.xy[1]) > h/2 {
			return 0, false
		}
		if geoDistance(xy[0], xy[1], s.xy[0], xy[1]) > w/2 {
			return 0, false
		}
		return s.fromCentre(xy[0], xy[1]), true
	}
	r := s.radius * s.conversion
	if latDistance(xy[1], s.xy[1]) > r*outsideMargin {
		return 0, false
	}
	lon1r, lon2r := s.xy[0]*degToRad, xy[0]*degToRad
	lat1r, lat2r := s.xy[1]*degToRad, xy[1]*degToRad
	x, y := math.Abs(lon2r-lon1r)/2, math.Abs(lat2r-lat1r)/2
	bounded := s.maxTerm != 0
	if bounded {
		uLow := max(y-y*y*y/6, 0)
		vLow := max(x-x*x*x/6, 0)
		if uLow*uLow+s.cosMin*vLow*vLow > s.maxTerm {
			return 0, false
		}
	}
	v := math.Sin((lon2r - lon1r) / 2)
	u := math.Sin((lat2r - lat1r) / 2)
	a := u*u + s.cosLat*math.Cos(lat2r)*v*v
	if bounded && a > s.maxTerm {
		return 0, false
	}
	var d float64
	if v == 0 {
		d = latDistance(s.xy[1], xy[1])
	} else {
		d = 2.0 * earthRadius * math.Asin(math.Sqrt(a))
	}
	return d, d <= r
}

type geoPoint struct {
	xy     [2]float64
	dist   float64
	score  float64
	member string
}

// search appends to out the members of z in the shape's boxes
// (membersOfAllNeighbors), at most limit of them when limit > 0.
func (s *geoShape) search(z *keyspace.ZSet, limit int, out []geoPoint) []geoPoint {
	s.prepare()
	boxes := s.searchAreas()
	last := -1
	for i, h := range boxes {
		if h.bits == 0 && h.step == 0 {
			continue
		}
		if last >= 0 && h == boxes[last] {
			continue
		}
		if len(out) > 0 && limit > 0 && len(out) >= limit {
			break
		}
		lo := align52(h)
		h.bits++
		hi := align52(h)
		z.AscendScores(keyspace.ScoreRange{Min: float64(lo), Max: float64(hi), MaxEx: true}, func(m string, score float64) bool {
			if xy, ok := decodeGeohash(score); ok {
				if d, in := s.within(xy); in {
					out = append(out, geoPoint{xy: xy, dist: d, score: score, member: m})
				}
			}
			return !(len(out) > 0 && limit > 0 && len(out) >= limit)
		})
		last = i
	}
	return out
}

// geoScratch is a search's working memory, reused from one search to
// the next: make bench's GEOSEARCH (the ten nearest of some eighty points
// within 10 km) otherwise allocated 9.4 KB a search for the points found
// and their sort keys, and the collector's work for that garbage was a
// seventh of the command's time in its profile.
type geoScratch struct {
	found  []geoPoint
	keys   []geoKey
	sorted []geoPoint
}

// geoScratchKeep bounds the points a scratch kept for reuse may hold:
// one search of a million points does not pin its memory.
const geoScratchKeep = 4096

var geoScratchPool = sync.Pool{New: func() any { return new(geoScratch) }}

// done clears the points, which refer to members of the sorted set
// searched, and returns the scratch to the pool.
func (g *geoScratch) done() {
	if cap(g.found) > geoScratchKeep || cap(g.keys) > geoScratchKeep || cap(g.sorted) > geoScratchKeep {
		return
	}
	clear(g.found)
	clear(g.sorted)
	g.found, g.keys, g.sorted = g.found[:0], g.keys[:0], g.sorted[:0]
	geoScratchPool.Put(g)
}

// geoKey is a found point's place in the order of distance: its
// distance, and its index in the found order.
type geoKey struct {
	dist float64
	i    int32
}

// sortPoints puts in g.sorted the first n of g.found ordered by distance
// (sortDir 1: nearest first, -1: farthest first), as georadiusGeneric
// orders them: when all are returned, with qsort (glibc's merge sort,
// stable: points at the same distance stay in the found order), else
// with pqsort, which sorts only what the first n need, and leaves points
// at the same distance in its own order. It orders keys rather than the
// points, which are large to move.
func (g *geoScratch) sortPoints(sortDir, n int) []geoPoint {
	keys := g.keys[:0]
	for i := range g.found {
		keys = append(keys, geoKey{g.found[i].dist, int32(i)})
	}
	g.keys = keys
	byDist := func(a, b geoKey) int {
		switch {
		case a.dist > b.dist:
			return sortDir
		case a.dist < b.dist:
			return -sortDir
		}
		return 0
	}
	if n == len(keys) {
		slices.SortFunc(keys, func(a, b geoKey) int {
			if c := byDist(a, b); c != 0 {
				return c
			}
			return int(a.i - b.i)
		})
	} else {
		pqsort(keys, 0, len(keys), 0, n-1, byDist)
	}
	out := g.sorted[:0]
	for _, k := range keys[:n] {
		out = append(out, g.found[k.i])
	}
	g.sorted = out
	return out
}

// pqsort is Redis's pqsort (pqsort.c, Bentley and McIlroy's quicksort
// from NetBSD): it sorts the n keys from base enough that those at
// indices lo to hi are where a full sort would put them, recursing only
// into the parts that overlap that range. The same comparisons and swaps
// in the same order as Redis's, so points at the same distance come out
// in the same order.
func pqsort(a []geoKey, base, n, lo, hi int, cmp func(x, y geoKey) int) {
	// outside reports whether [from, from+cnt) lies wholly before or
	// after [lo, hi].
	outside := func(from, cnt int) bool {
		return (lo < from && hi < from) || (lo >= from+cnt && hi >= from+cnt)
	}
	vecswap := func(x, y, cnt int) {
		for k := 0; k < cnt; k++ {
			a[x+k], a[y+k] = a[y+k], a[x+k]
		}
	}
	med3 := func(x, y, z int) int {
		if cmp(a[x], a[y]) < 0 {
			if cmp(a[y], a[z]) < 0 {
				return y
			}
			if cmp(a[x], a[z]) < 0 {
				return z
			}
			return x
		}
		if cmp(a[y], a[z]) > 0 {
			return y
		}
		if cmp(a[x], a[z]) < 0 {
			return x
		}
		return z
	}
	for {
		if n < 7 {
			for pm := base + 1; pm < base+n; pm++ {
				for pl := pm; pl > base && cmp(a[pl-1], a[pl]) > 0; pl-- {
					a[pl], a[pl-1] = a[pl-1], a[pl]
				}
			}
			return
		}
		pm := base + n/2
		if n > 7 {
			pl, pn := base, base+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		a[base], a[pm] = a[pm], a[base]
		pa, pb := base+1, base+1
		pc, pd := base+n-1, base+n-1
		for {
			for pb <= pc {
				c := cmp(a[pb], a[base])
				if c > 0 {
					break
				}
				if c == 0 {
					a[pa], a[pb] = a[pb], a[pa]
					pa++
				}
				pb++
			}
			for pb <= pc {
				c := cmp(a[pc], a[base])
				if c < 0 {
					break
				}
				if c == 0 {
					a[pc], a[pd] = a[pd], a[pc]
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			a[pb], a[pc] = a[pc], a[pb]
			pb++
			pc--
		}
		pn := base + n
		r := min(pa-base, pb-pa)
		vecswap(base, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		if r = pb - pa; r > 1 && !outside(base, r) {
			pqsort(a, base, r, lo, hi, cmp)
		}
		if r = pd - pc; r > 1 {
			// Iterate rather than recurse, as Redis's does.
			base, n = pn-r, r
			if !outside(base, n) {
				continue
			}
		}
		return
	}
}

// lonLat parses a longitude and a latitude (extractLongLatOrReply).
func lonLat(c *engine.Ctx, lonArg, latArg []byte) ([2]float64, bool) {
	var xy [2]float64
	for i, a := range [][]byte{lonArg, latArg} {
		f, ok := parseScore(a) // getDoubleFromObject
		if !ok {
			c.Error(engine.ErrNotFloat)
			return xy, false
		}
		xy[i] = f
	}
	if xy[0] < geoLongMin || xy[0] > geoLongMax || xy[1] < geoLatMin || xy[1] > geoLatMax {
		c.Error("ERR invalid longitude,latitude pair " + cFixed6(xy[0]) + "," + cFixed6(xy[1]))
		return xy, false
	}
	return xy, true
}

// cFixed6 is C's "%f": infinities as inf and -inf.
func cFixed6(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// geoUnit is a unit's metres (extractUnitOrReply); 0 after the error.
func geoUnit(c *engine.Ctx, u []byte) float64 {
	switch {
	case engine.EqualFold(u, "m"):
		return 1
	case engine.EqualFold(u, "km"):
		return 1000
	case engine.EqualFold(u, "ft"):
		return 0.3048
	case engine.EqualFold(u, "mi"):
		return 1609.34
	}
	c.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0
}

// geoFloat parses a float argument, with the error msg (getDoubleFromObjectOrReply).
func geoFloat(c *engine.Ctx, a []byte, msg string) (float64, bool) {
	f, ok := parseScore(a)
	if !ok {
		c.Error("ERR " + msg)
	}
	return f, ok
}

// geoDistanceArg is extractDistanceOrReply: radius and unit.
func geoDistanceArg(c *engine.Ctx, r, u []byte, s *geoShape) bool {
	d, ok := geoFloat(c, r, "need numeric radius")
	if !ok {
		return false
	}
	if d < 0 {
		c.Error("ERR radius cannot be negative")
		return false
	}
	s.radius = d
	s.conversion = geoUnit(c, u)
	return s.conversion != 0
}

// formatDistance is fixedpoint_d2string with 4 digits: the distance
// rounded to a multiple of 0.0001 as llrint does.
func formatDistance(d float64) string {
	v := int64(math.RoundToEven(d * 10000))
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	for len(s) < 5 {
		s = "0" + s
	}
	s = s[:len(s)-4] + "." + s[len(s)-4:]
	if neg {
		s = "-" + s
	}
	return s
}

// formatCoord is addReplyHumanLongDouble of a coordinate.
func formatCoord(f float64) []byte { return formatLongDouble(nil, new(big.Float).SetFloat64(f)) }

// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD of the
// points' scores, which is what is propagated; the slow log and MONITOR
// show the GEOADD (RewriteArgs).
func geoaddCommand(c *engine.Ctx) {
	idx := 2
	nx, xx := false, false
options:
	for ; idx < len(c.Args); idx++ {
		switch a := c.Args[idx]; {
		case engine.EqualFold(a, "nx"):
			nx = true
		case engine.EqualFold(a, "xx"):
			xx = true
		case engine.EqualFold(a, "ch"):
		default:
			break options
		}
	}
	if (len(c.Args)-idx)%3 != 0 || nx && xx {
		c.Error(engine.ErrSyntax)
		return
	}
	argv := make([][]byte, 0, idx+(len(c.Args)-idx)/3*2)
	argv = append(argv, []byte("zadd"))
	argv = append(argv, c.Args[1:idx]...)
	for i := idx; i < len(c.Args); i += 3 {
		xy, ok := lonLat(c, c.Args[i], c.Args[i+1])
		if !ok {
			return
		}
		argv = append(argv, strconv.AppendUint(nil, geoScore(xy[0], xy[1]), 10), c.Args[i+2])
	}
	c.RewriteArgs(argv)
	zaddGeneric(c, 0)
}

// GEODIST key member1 member2 [unit]
func geodistCommand(c *engine.Ctx) {
	toMeter := 1.0
	switch {
	case len(c.Args) == 5:
		if toMeter = geoUnit(c, c.Args[4]); toMeter == 0 {
			return
		}
	case len(c.Args) > 5:
		c.Error(engine.ErrSyntax)
		return
	}
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	s1, ok1 := z.Score(c.Args[2])
	s2, ok2 := z.Score(c.Args[3])
	if !ok1 || !ok2 {
		c.W.Null()
		return
	}
	a, okA := decodeGeohash(s1)
	b, okB := decodeGeohash(s2)
	if !okA || !okB {
		c.W.Null()
		return
	}
	c.W.BulkString(formatDistance(geoDistance(a[0], a[1], b[0], b[1]) / toMeter))
}

// GEOHASH key [member ...]: 11-character standard geohashes (latitude
// over -90..90), the last character always "0".
func geohashCommand(c *engine.Ctx) {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		xy, ok := memberLonLat(z, m)
		if !ok {
			c.W.Null()
			continue
		}
		h, _ := geohashEncode(ghRange{-180, 180}, ghRange{-90, 90}, xy[0], xy[1], 26)
		var buf [11]byte
		for i := range buf {
			idx := 0
			if i < 10 {
				idx = int(h.bits >> (52 - (i+1)*5) & 0x1f)
			}
			buf[i] = alphabet[idx]
		}
		c.W.Bulk(buf[:])
	}
}

// GEOPOS key [member ...]
func geoposCommand(c *engine.Ctx) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		xy, ok := memberLonLat(z, m)
		if !ok {
			c.W.NullArray()
			continue
		}
		c.W.Array(2)
		c.W.DoubleText(formatCoord(xy[0]))
		c.W.DoubleText(formatCoord(xy[1]))
	}
}

// The variants of georadiusGeneric.
const (
	geoByCoords = 1 << iota
	geoByMember
	geoNoStore
	geoSearch
	geoSearchStore
)

func georadiusCommand(c *engine.Ctx)   { geoSearchGeneric(c, 1, geoByCoords) }
func georadiusRoCommand(c *engine.Ctx) { geoSearchGeneric(c, 1, geoByCoords|geoNoStore) }
func georadiusbymemberCommand(c *engine.Ctx) {
	geoSearchGeneric(c, 1, geoByMember)
}
func georadiusbymemberRoCommand(c *engine.Ctx) {
	geoSearchGeneric(c, 1, geoByMember|geoNoStore)
}
func geosearchCommand(c *engine.Ctx)      { geoSearchGeneric(c, 1, geoSearch) }
func geosearchstoreCommand(c *engine.Ctx) { geoSearchGeneric(c, 2, geoSearch|geoSearchStore) }

// geoSearchGeneric is georadiusGeneric.
func geoSearchGeneric(c *engine.Ctx, srcIdx int, flags int) {
	args := c.Args
	z, ok := zsetRead(c, args[srcIdx])
	if !ok {
		return
	}
	var shape geoShape
	var store []byte
	storeDist := false
	var base int
	switch {
	case flags&geoByCoords != 0:
		base = 6
		xy, ok := lonLat(c, args[2], args[3])
		if !ok {
			return
		}
		shape.xy = xy
		if !geoDistanceArg(c, args[4], args[5], &shape) {
			return
		}
	case flags&geoByMember != 0 && z == nil:
		base = 5
	case flags&geoByMember != 0:
		base = 5
		xy, ok := memberLonLat(z, args[2])
		if !ok {
			c.Error("ERR could not decode requested zset member")
			return
		}
		shape.xy = xy
		if !geoDistanceArg(c, args[3], args[4], &shape) {
			return
		}
	default:
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			store = args[1]
		}
	}
	var withDist, withHash, withCoord, fromMember, fromLoc, byRadius, byBox, any bool
	sortDir := 0
	var count int64
	rest := args[base:]
	for i := 0; i < len(rest); i++ {
		left := len(rest) - i - 1
		switch a := rest[i]; {
		case engine.EqualFold(a, "withdist"):
			withDist = true
		case engine.EqualFold(a, "withhash"):
			withHash = true
		case engine.EqualFold(a, "withcoord"):
			withCoord = true
		case engine.EqualFold(a, "any"):
			any = true
		case engine.EqualFold(a, "asc"):
			sortDir = 1
		case engine.EqualFold(a, "desc"):
			sortDir = -1
		case engine.EqualFold(a, "count") && left >= 1:
			var ok bool
			if count, ok = c.IntArg(base + i + 1); !ok {
				return
			}
			if count <= 0 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			i++
		case (engine.EqualFold(a, "store") || engine.EqualFold(a, "storedist")) && left >= 1 && flags&(geoNoStore|geoSearch) == 0:
			store = rest[i+1]
			storeDist = engine.EqualFold(a, "storedist")
			i++
		case engine.EqualFold(a, "storedist") && flags&geoSearch != 0 && flags&geoSearchStore != 0:
			storeDist = true
		case engine.EqualFold(a, "frommember") && left >= 1 && flags&geoSearch != 0 && !fromLoc:
			if z != nil {
				xy, ok := memberLonLat(z, rest[i+1])
				if !ok {
					c.Error("ERR could not decode requested zset member")
					return
				}
				shape.xy = xy
			}
			fromMember = true
			i++
		case engine.EqualFold(a, "fromlonlat") && left >= 2 && flags&geoSearch != 0 && !fromMember:
			xy, ok := lonLat(c, rest[i+1], rest[i+2])
			if !ok {
				return
			}
			shape.xy = xy
			fromLoc = true
			i += 2
		case engine.EqualFold(a, "byradius") && left >= 2 && flags&geoSearch != 0 && !byBox:
			if !geoDistanceArg(c, rest[i+1], rest[i+2], &shape) {
				return
			}
			shape.box = false
			byRadius = true
			i += 2
		case engine.EqualFold(a, "bybox") && left >= 3 && flags&geoSearch != 0 && !byRadius:
			w, ok := geoFloat(c, rest[i+1], "need numeric width")
			if !ok {
				return
			}
			h, ok := geoFloat(c, rest[i+2], "need numeric height")
			if !ok {
				return
			}
			if h < 0 || w < 0 {
				c.Error("ERR height or width cannot be negative")
				return
			}
			shape.width, shape.height = w, h
			if shape.conversion = geoUnit(c, rest[i+3]); shape.conversion == 0 {
				return
			}
			shape.box = true
			byBox = true
			i += 3
		default:
			c.Error(engine.ErrSyntax)
			return
		}
	}
	name := string(args[0])
	if store != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.Error("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if flags&geoSearch != 0 && !(fromMember || fromLoc) {
		c.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + name)
		return
	}
	if flags&geoSearch != 0 && !(byRadius || byBox) {
		c.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + name)
		return
	}
	if any && count == 0 {
		c.Error("ERR the ANY argument requires COUNT argument")
		return
	}
	if z == nil {
		if store != nil {
			zsetStoreEmpty(c, store)
			c.W.Int(0)
		} else {
			c.W.Array(0)
		}
		return
	}
	if count != 0 && sortDir == 0 && !any {
		sortDir = 1
	}
	limit := 0
	if any {
		limit = int(count)
	}
	scratch := geoScratchPool.Get().(*geoScratch)
	defer scratch.done()
	points := shape.search(z, limit, scratch.found)
	scratch.found = points
	if len(points) == 0 && store == nil {
		c.W.Array(0)
		return
	}
	n := len(points)
	if count != 0 && int64(n) > count {
		n = int(count)
	}
	if sortDir != 0 {
		points = scratch.sortPoints(sortDir, n)
	}
	points = points[:n]
	if store == nil {
		opts := 0
		for _, on := range []bool{withDist, withCoord, withHash} {
			if on {
				opts++
			}
		}
		c.W.Array(n)
		for _, p := range points {
			if opts > 0 {
				c.W.Array(opts + 1)
			}
			c.W.BulkString(p.member)
			if withDist {
				c.W.BulkString(formatDistance(p.dist / shape.conversion))
			}
			if withHash {
				c.W.Int(int64(p.score))
			}
			if withCoord {
				c.W.Array(2)
				c.W.DoubleText(formatCoord(p.xy[0]))
				c.W.DoubleText(formatCoord(p.xy[1]))
			}
		}
		return
	}
	if n == 0 {
		zsetStoreEmpty(c, store)
		c.W.Int(0)
		return
	}
	dst := keyspace.NewZSet()
	for _, p := range points {
		score := p.score
		if storeDist {
			score = p.dist / shape.conversion
		}
		dst.Set([]byte(p.member), score, false)
	}
	maxEntries, maxValue := zsetLimits(c)
	dst.Fit(maxEntries, maxValue)
	event := "georadiusstore"
	if flags&geoSearch != 0 {
		event = "geosearchstore"
	}
	zsetStore(c, store, dst, event)
	c.Dirty(n - 1)
	c.W.Int(int64(n))
}

// memberLonLat is longLatFromMember: the position of a member; false
// when z (nil: no key) does not hold it.
func memberLonLat(z *keyspace.ZSet, m []byte) ([2]float64, bool) {
	if z == nil {
		return [2]float64{}, false
	}
	s, ok := z.Score(m)
	if !ok {
		return [2]float64{}, false
	}
	return decodeGeohash(s)
}

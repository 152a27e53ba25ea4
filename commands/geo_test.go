package commands

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGeoWithinMatchesDistance holds the circle's shortcuts (rejection
// by latitude, by a trig-free lower bound and by the haversine term) to
// geoWithinShape's answer: the point is in exactly when its distance,
// computed as geohashGetDistance does, is within the radius, and the
// distance reported is that one to the last bit. Points are drawn near
// the circle's edge, where a shortcut that rounded wrongly would show.
func TestGeoWithinMatchesDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 20000; i++ {
		lon := (rng.Float64()*2 - 1) * 180
		lat := (rng.Float64()*2 - 1) * 85
		radii := []float64{0, 0.001, 1, 100, 10000, 1e6, 1e7, 3e7}
		r := radii[rng.IntN(len(radii))] * (0.5 + rng.Float64())
		s := geoShape{xy: [2]float64{lon, lat}, conversion: 1, radius: r}
		s.prepare()
		for j := 0; j < 20; j++ {
			// A point at about the radius in a random direction, with a
			// relative jitter from 1e-3 down to 1e-15.
			ang := rng.Float64() * 2 * math.Pi
			dist := r * (1 + (rng.Float64()*2-1)*math.Pow(10, -3-12*rng.Float64()))
			dlat := dist / earthRadius / degToRad * math.Sin(ang)
			dlon := dist / earthRadius / degToRad * math.Cos(ang) / math.Max(math.Cos(lat*degToRad), 1e-6)
			p := [2]float64{lon + dlon, min(max(lat+dlat, geoLatMin), geoLatMax)}
			if p[0] > 180 {
				p[0] -= 360
			} else if p[0] < -180 {
				p[0] += 360
			}
			want := geoDistance(lon, lat, p[0], p[1])
			d, in := s.within(p)
			if in != (want <= r) || (in && d != want) {
				t.Fatalf("centre %v radius %v point %v: within gave %v, %v; distance %v", s.xy, r, p, d, in, want)
			}
		}
	}
}

package tests

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Geo compared with redis-server: scores, positions, hashes, distances
// and searches, byte for byte. Points are spread so that no two lie at
// the same distance from a search's centre (Redis's qsort leaves the
// order of equal distances open).

var geoCases = [][]string{
	{"GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
	{"GEOADD", "Sicily", "13.361389", "38.115556", "Palermo"},
	{"GEOADD", "Sicily", "CH", "13.5", "38.1", "Palermo", "14.2", "37.1", "Enna"},
	{"GEOADD", "Sicily", "NX", "0", "0", "Palermo", "12.5", "37.8", "Marsala"},
	{"GEOADD", "Sicily", "XX", "CH", "13.361389", "38.115556", "Palermo", "1", "1", "Nowhere"},
	{"GEOADD", "Sicily", "NX", "XX", "1", "1", "x"},
	{"GEOADD", "Sicily", "1", "1"},
	{"GEOADD", "Sicily", "200", "100", "x"},
	{"GEOADD", "Sicily", "10", "86", "x"},
	{"GEOADD", "Sicily", "abc", "1", "x"},
	{"GEOADD", "Sicily", "GT", "1", "1", "x"},
	{"GEOADD", "Sicily", "1e-400", "0", "x"},
	{"GEOADD", "Sicily", "1e400", "0", "x"},
	{"GEOADD", "Sicily", "inf", "0", "x"},
	{"GEOADD", "Sicily", "-inf", "0", "x"},
	{"GEOADD", "Sicily", "nan", "0", "x"},
	{"GEOADD", "Sicily", " 1", "0", "x"},
	{"GEOADD", "hex", "0x10", "0", "x"},
	{"GEOPOS", "hex", "x"},
	{"GEORADIUS", "Sicily", "15", "37", "1e400", "km"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "0", "0", "BYBOX", "1e-400", "1", "km"},
	{"ZRANGE", "Sicily", "0", "-1", "WITHSCORES"},
	{"GEOPOS", "Sicily", "Palermo", "Catania", "nope", "Enna"},
	{"GEOPOS", "nokey", "a"},
	{"GEOPOS", "Sicily"},
	{"GEOHASH", "Sicily", "Palermo", "Catania", "nope", "Marsala"},
	{"GEOHASH", "nokey", "a"},
	{"GEODIST", "Sicily", "Palermo", "Catania"},
	{"GEODIST", "Sicily", "Palermo", "Catania", "km"},
	{"GEODIST", "Sicily", "Palermo", "Catania", "MI"},
	{"GEODIST", "Sicily", "Palermo", "Catania", "ft"},
	{"GEODIST", "Sicily", "Palermo", "Palermo"},
	{"GEODIST", "Sicily", "Palermo", "nope"},
	{"GEODIST", "nokey", "a", "b"},
	{"GEODIST", "Sicily", "Palermo", "Catania", "yards"},
	{"GEODIST", "Sicily", "Palermo", "Catania", "km", "x"},

	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH", "ASC"},
	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "DESC", "WITHDIST"},
	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "2"},
	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "2", "DESC"},
	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "0"},
	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "ANY"},
	{"GEORADIUS", "Sicily", "15", "37", "-1", "km"},
	{"GEORADIUS", "Sicily", "15", "37", "x", "km"},
	{"GEORADIUS", "Sicily", "15", "37", "10", "parsecs"},
	{"GEORADIUS", "Sicily", "15", "37", "10", "km", "BOGUS"},
	{"GEORADIUS", "Sicily", "15", "37", "1", "km"},
	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst"},
	{"ZRANGE", "dst", "0", "-1", "WITHSCORES"},
	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "dst"},
	// (The distances stored are doubles whose last digits follow the
	// platform's sin and cos: compared through GEODIST-like rounding in
	// TestGeoStoreDist.)
	{"ZRANGE", "dst", "0", "-1"},
	{"GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst", "WITHDIST"},
	{"GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "dst"},
	{"EXISTS", "dst"},
	{"GEORADIUS", "nokey", "15", "37", "200", "km"},
	{"GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "dst"},
	{"GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "WITHDIST", "ASC"},
	{"GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STORE", "dst"},
	{"GEORADIUSBYMEMBER", "Sicily", "Palermo", "150", "km", "WITHDIST", "ASC"},
	{"GEORADIUSBYMEMBER", "Sicily", "nope", "150", "km"},
	{"GEORADIUSBYMEMBER", "nokey", "nope", "150", "km"},
	{"GEORADIUSBYMEMBER_RO", "Sicily", "Enna", "100", "km", "WITHCOORD", "ASC"},

	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC", "WITHDIST"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC", "WITHDIST", "WITHHASH"},
	{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "200", "120", "km", "DESC", "WITHCOORD"},
	{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "50", "mi", "COUNT", "1"},
	{"GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "50", "mi"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37"},
	{"GEOSEARCH", "Sicily", "BYRADIUS", "15", "km", "ASC"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "-1", "1", "km"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "x", "1", "km"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "10", "km", "STORE", "x"},
	{"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "10", "km", "ANY"},
	{"GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "10", "km"},
	{"GEOSEARCHSTORE", "gdst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC", "COUNT", "2", "STOREDIST"},
	{"ZRANGE", "gdst", "0", "-1"},
	{"GEOSEARCHSTORE", "gdst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"},
	{"ZRANGE", "gdst", "0", "-1", "WITHSCORES"},
	{"GEOSEARCHSTORE", "gdst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHDIST"},
	{"GEOSEARCHSTORE", "gdst", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"},
	{"EXISTS", "gdst"},
	{"SET", "str", "x"},
	{"GEOADD", "str", "1", "1", "a"},
	{"GEOPOS", "str", "a"},
	{"GEODIST", "str", "a", "b"},
	{"GEOSEARCH", "str", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"},
	{"COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "1", "1", "km", "STORE", "a", "STOREDIST", "b"},
	{"COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "1", "1", "km", "STORE", "a", "STORE", "b"},
	{"COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "k", "m", "1", "km", "STOREDIST", "a"},
	{"COMMAND", "GETKEYSANDFLAGS", "GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"},

	// The poles, the antimeridian and huge radii.
	{"GEOADD", "edges", "-180", "-85.05112878", "sw", "180", "85.05112878", "ne", "179.999", "0.5", "east", "-179.999", "0.6", "west", "0", "0", "origin"},
	{"GEOPOS", "edges", "sw", "ne", "east", "west", "origin"},
	{"GEOHASH", "edges", "sw", "ne", "east", "west", "origin"},
	{"GEORADIUS", "edges", "180", "0.5", "300", "km", "WITHDIST", "ASC"},
	{"GEORADIUS", "edges", "0", "0", "20000", "km", "WITHDIST", "ASC"},
	{"GEOSEARCH", "edges", "FROMLONLAT", "0", "80", "BYBOX", "40000", "2000", "km", "WITHDIST", "ASC"},
	{"GEORADIUS", "edges", "0", "0", "0", "m", "WITHDIST"},
}

func TestGeoDifferential(t *testing.T) {
	d := NewDiff(t)
	for _, c := range geoCases {
		d.Do(c...)
	}
}

// STOREDIST keeps the distances: the same to 12 significant digits as
// redis-server's (the last ones follow the platform's sin and cos).
func TestGeoStoreDist(t *testing.T) {
	d := NewDiff(t)
	d.Do("GEOADD", "sd", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "14.2", "37.1", "Enna")
	d.Do("GEORADIUS", "sd", "15", "37", "200", "km", "STOREDIST", "sdd")
	for _, m := range []string{"Palermo", "Catania", "Enna"} {
		z, r := d.Z.Do("ZSCORE", "sdd", m), d.R.Do("ZSCORE", "sdd", m)
		zf, _ := strconv.ParseFloat(strings.Split(z, "\r\n")[1], 64)
		rf, _ := strconv.ParseFloat(strings.Split(r, "\r\n")[1], 64)
		if math.Abs(zf-rf) > 1e-12*math.Abs(rf) {
			t.Errorf("%s: zredis %q, redis %q", m, z, r)
		}
	}
}

// Random points and random searches around them, on both servers.
func TestGeoRandomDifferential(t *testing.T) {
	d := NewDiff(t)
	rng := rand.New(rand.NewPCG(1, 2))
	coord := func(lim float64) string {
		return strconv.FormatFloat((rng.Float64()*2-1)*lim, 'f', 6, 64)
	}
	args := []string{"GEOADD", "rg"}
	for i := 0; i < 400; i++ {
		args = append(args, coord(180), coord(85), "p"+strconv.Itoa(i))
	}
	d.Do(args...)
	for i := 0; i < 60; i++ {
		lon, lat := coord(180), coord(85)
		r := strconv.Itoa(100 + rng.IntN(3000))
		d.Do("GEORADIUS", "rg", lon, lat, r, "km", "WITHDIST", "WITHCOORD", "WITHHASH", "ASC")
		d.Do("GEOSEARCH", "rg", "FROMLONLAT", lon, lat, "BYBOX", r, strconv.Itoa(100+rng.IntN(3000)), "km", "WITHDIST", "DESC", "COUNT", "5")
		d.Do("GEOSEARCH", "rg", "FROMLONLAT", lon, lat, "BYRADIUS", r, "mi")
		m := "p" + strconv.Itoa(rng.IntN(400))
		d.Do("GEODIST", "rg", m, "p"+strconv.Itoa(rng.IntN(400)), "km")
		d.Do("GEOHASH", "rg", m)
		d.Do("GEOPOS", "rg", m)
	}
}

// COUNT below the number found keeps the nearest (or farthest) first,
// and points at the same distance in the order Redis's sorts leave them
// (pqsort's when fewer than all are returned, else qsort's): a grid
// symmetric around the centre, with members sharing positions.
func TestGeoCountTiesDifferential(t *testing.T) {
	d := NewDiff(t)
	args := []string{"GEOADD", "ties"}
	for i := 0; i < 400; i++ {
		lon := strconv.FormatFloat(13.0+float64(i%20-10)*0.01, 'f', 4, 64)
		lat := strconv.FormatFloat(38.0+float64(i/20-10)*0.01, 'f', 4, 64)
		args = append(args, lon, lat, "g"+strconv.Itoa(i))
		args = append(args, lon, lat, "h"+strconv.Itoa(i))
	}
	d.Do(args...)
	for _, count := range []string{"1", "3", "7", "50", "799", "800", "1000"} {
		for _, dir := range []string{"ASC", "DESC"} {
			d.Do("GEOSEARCH", "ties", "FROMLONLAT", "13.0", "38.0", "BYRADIUS", "8", "km", dir, "COUNT", count, "WITHDIST")
			d.Do("GEOSEARCH", "ties", "FROMMEMBER", "g210", "BYBOX", "5", "5", "km", dir, "COUNT", count)
			d.Do("GEORADIUS", "ties", "13.0", "38.0", "20", "km", dir, "COUNT", count)
		}
	}
	// The distances themselves differ in their last digits (see
	// TestGeoStoreDist): the members, not the scores.
	d.Do("GEOSEARCHSTORE", "tdst", "ties", "FROMLONLAT", "13.0", "38.0", "BYRADIUS", "8", "km", "DESC", "COUNT", "9", "STOREDIST")
	d.Do("ZRANGE", "tdst", "0", "-1")
	d.Do("GEOSEARCH", "ties", "FROMLONLAT", "13.0", "38.0", "BYRADIUS", "8", "km", "ASC", "COUNT", "9", "ANY")
}

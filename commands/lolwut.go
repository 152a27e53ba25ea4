package commands

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/zredis/zredis/engine"
)

// LOLWUT [VERSION v] [args] (Redis lolwut.c, lolwut5.c, lolwut6.c): the
// version line, or with VERSION 5 Georg Nees's Schotter in Braille
// characters, with VERSION 6 a city skyline in terminal colours; both
// random, as in Redis.
func init() {
	register(&engine.Command{Name: "lolwut", Arity: -1, Flags: engine.ReadOnly | engine.Fast, ACL: "@read @fast", Group: "server", Run: lolwutCommand})
}

func lolwutCommand(c *engine.Ctx) {
	args := c.Args[1:]
	v := RedisVersion
	if len(args) >= 2 && engine.EqualFold(args[0], "version") {
		n, ok := c.IntArg(2)
		if !ok {
			return
		}
		v = formatUint32(uint32(n)) + ".0.0"
		args = args[2:]
	}
	switch {
	case v[0] == '5' && v[1] == '.' && v[2] != '9', v[0] == '4' && v[1] == '.' && v[2] == '9':
		lolwut5(c, args)
	case v[0] == '6' && v[1] == '.' && v[2] != '9', v[0] == '5' && v[1] == '.' && v[2] == '9':
		lolwut6(c, args)
	default:
		c.W.Verbatim("Redis ver. " + RedisVersion + "\n")
	}
}

func formatUint32(n uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// lolwutArgs parses up to len(vals) integer arguments into vals, each
// then clamped to [1, limit]; false after the error reply.
func lolwutArgs(c *engine.Ctx, args [][]byte, limit int64, vals ...*int64) bool {
	for i, p := range vals {
		if i < len(args) {
			n, ok := engine.ParseInt(args[i])
			if !ok {
				c.Error(engine.ErrNotInteger)
				return false
			}
			*p = n
		}
		*p = min(max(*p, 1), limit)
	}
	return true
}

// canvas is lwCanvas: a grid of colours.
type canvas struct {
	w, h int
	px   []byte
}

func newCanvas(w, h int, bg byte) *canvas {
	cv := &canvas{w: w, h: h, px: make([]byte, w*h)}
	for i := range cv.px {
		cv.px[i] = bg
	}
	return cv
}

func (cv *canvas) set(x, y int, col byte) {
	if x >= 0 && x < cv.w && y >= 0 && y < cv.h {
		cv.px[x+y*cv.w] = col
	}
}

func (cv *canvas) get(x, y int) byte {
	if x >= 0 && x < cv.w && y >= 0 && y < cv.h {
		return cv.px[x+y*cv.w]
	}
	return 0
}

// line is Bresenham's, as lwDrawLine.
func (cv *canvas) line(x1, y1, x2, y2 int, col byte) {
	dx, dy := abs(x2-x1), abs(y2-y1)
	sx, sy := 1, 1
	if x1 >= x2 {
		sx = -1
	}
	if y1 >= y2 {
		sy = -1
	}
	err := dx - dy
	for {
		cv.set(x1, y1, col)
		if x1 == x2 && y1 == y2 {
			return
		}
		e2 := err * 2
		if e2 > -dy {
			err -= dy
			x1 += sx
		}
		if e2 < dx {
			err += dx
			y1 += sy
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// square is lwDrawSquare: a square of side size centred on x,y, turned
// by angle.
func (cv *canvas) square(x, y int, size, angle float32, col byte) {
	size = float32(math.Round(float64(size / 1.4142135623)))
	k := float32(math.Pi/4) + angle
	var px, py [4]int
	for j := range px {
		px[j] = int(math.Round(math.Sin(float64(k))*float64(size) + float64(x)))
		py[j] = int(math.Round(math.Cos(float64(k))*float64(size) + float64(y)))
		k += math.Pi / 2
	}
	for j := range px {
		cv.line(px[j], py[j], px[(j+1)%4], py[(j+1)%4], col)
	}
}

func lolwut5(c *engine.Ctx, args [][]byte) {
	cols, perRow, perCol := int64(66), int64(8), int64(12)
	if !lolwutArgs(c, args, 1000, &cols) || !lolwutArgs(c, args[min(1, len(args)):], 200, &perRow, &perCol) {
		return
	}
	width := int(cols) * 2
	padding := 0
	if width > 4 {
		padding = 2
	}
	side := float32(width-padding*2) / float32(perRow)
	cv := newCanvas(width, int(side*float32(perCol))+padding*2, 0)
	for y := 0; y < int(perCol); y++ {
		for x := 0; x < int(perRow); x++ {
			sx := int(float32(x)*side + side/2 + float32(padding))
			sy := int(float32(y)*side + side/2 + float32(padding))
			var angle float32
			if y > 1 {
				r := func() float32 {
					f := rand.Float32() / float32(perCol) * float32(y)
					if rand.IntN(2) == 1 {
						f = -f
					}
					return f
				}
				r1, r2, r3 := r(), r(), r()
				angle = r1
				sx += int(r2 * side / 3)
				sy += int(r3 * side / 3)
			}
			cv.square(sx, sy, side, angle, 1)
		}
	}
	var b strings.Builder
	for y := 0; y < cv.h; y += 4 {
		for x := 0; x < cv.w; x += 2 {
			bits := 0
			for i, p := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
				if cv.get(x+p[0], y+p[1]) != 0 {
					bits |= 1 << i
				}
			}
			b.WriteRune(rune(0x2800 + bits))
		}
		if y != cv.h-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " + RedisVersion + "\n")
	c.W.Verbatim(b.String())
}

func lolwut6(c *engine.Ctx, args [][]byte) {
	cols, rows := int64(80), int64(20)
	if !lolwutArgs(c, args, 1000, &cols, &rows) {
		return
	}
	cv := newCanvas(int(cols), int(rows), 3)
	skyline(cv)
	var b strings.Builder
	colours := [4]string{"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"}
	for y := 0; y < cv.h; y++ {
		for x := 0; x < cv.w; x++ {
			ce := colours[0]
			if col := cv.get(x, y); int(col) < len(colours) {
				ce = colours[col]
			}
			b.WriteString("\033[" + ce + " \033[0m")
		}
		if y != cv.h-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. " + RedisVersion + "\n")
	c.W.Verbatim(b.String())
}

type skyscraper struct {
	xoff, width, height int
	windows             bool
	color               byte
}

func (cv *canvas) skyscraper(s skyscraper) {
	start := cv.h - 1
	end := start - s.height + 1
	for y := start; y >= end; y-- {
		for x := s.xoff; x < s.xoff+s.width; x++ {
			if y == end && (x <= s.xoff+1 || x >= s.xoff+s.width-2) {
				continue
			}
			col := s.color
			if s.windows && x > s.xoff+1 && x < s.xoff+s.width-2 && y > end+1 && y < start-1 {
				relx, rely := x-(s.xoff+1), y-(end+1)
				if relx/2%2 != 0 && rely%2 != 0 {
					for col = byte(1 + rand.IntN(2)); col == s.color; col = byte(1 + rand.IntN(2)) {
					}
					if relx%2 != 0 {
						col = cv.get(x-1, y)
					}
				}
			}
			cv.set(x, y, col)
		}
	}
}

func skyline(cv *canvas) {
	for col := byte(2); col >= 1; col-- {
		for off := -10; off < cv.w; {
			off += rand.IntN(8)
			s := skyscraper{xoff: off, width: 10 + rand.IntN(9), color: col}
			if col == 2 {
				s.height = cv.h/2 + rand.IntN(max(cv.h, 1))/2
			} else {
				s.height = cv.h/2 + rand.IntN(max(cv.h, 1))/3
			}
			cv.skyscraper(s)
			if col == 2 {
				off += s.width / 2
			} else {
				off += s.width + 1
			}
		}
	}
	for off := -10; off < cv.w; {
		off += rand.IntN(8)
		s := skyscraper{xoff: off, width: 5 + rand.IntN(14), windows: true}
		if s.width%4 != 0 {
			s.width += s.width % 3
		}
		s.height = cv.h/3 + rand.IntN(max(cv.h, 1))/2
		cv.skyscraper(s)
		off += s.width + 5
	}
}

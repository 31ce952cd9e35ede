package report

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/clipperhouse/displaywidth"
)

// Fitting a table to a terminal. A table drawn wider than the terminal
// wraps every row into unreadable halves, so a table given a width leaves
// out its least needed columns, saying their content under the table, and
// then folds its wordy cells onto several lines. Widths are display
// columns, measured as tablewriter measures them (East Asian ambiguous
// characters narrow), so that a fitted table is as wide as computed.

// narrow measures display width with ambiguous characters one column wide.
var narrow = displaywidth.Options{EastAsianWidth: false}

// textWidth is the display width of s's widest line.
func textWidth(s string) int {
	w := 0
	for line := range strings.SplitSeq(s, "\n") {
		w = max(w, narrow.String(line))
	}
	return w
}

// header is the column's header cell in a terminal: the title, and what
// its figures are on a second line.
func (c column) header() string {
	if c.sub == "" {
		return c.title
	}
	return c.title + "\n" + c.sub
}

// gridWidth is how wide writeGrid draws a table of these cells: each
// column its widest cell plus a space either side, and one border
// character between two columns and at both ends.
func gridWidth(cols []column, rows [][]string) int {
	total := 1
	for j, c := range cols {
		w := textWidth(c.header())
		for _, r := range rows {
			w = max(w, textWidth(r[j]))
		}
		total += w + 3
	}
	return total
}

// minFold is the narrowest a folded column gets: narrower, a cell of
// ordinary words becomes a column of syllables.
const minFold = 12

// fitColumns chooses which columns of a table drawn at most width columns
// wide keep their place, and folds the cells of the kept ones that may be
// folded. It returns the kept columns' indexes in order and the cells, in
// the kept columns only. A width of 0 keeps everything as it is. A table
// that cannot be made narrow enough is returned as narrow as it gets.
func fitColumns(cols []column, rows [][]string, width int) ([]int, [][]string) {
	keep := make([]int, len(cols))
	for j := range cols {
		keep[j] = j
	}
	pick := func() ([]column, [][]string) {
		cs := make([]column, len(keep))
		rs := make([][]string, len(rows))
		for k, j := range keep {
			cs[k] = cols[j]
		}
		for i, r := range rows {
			rs[i] = make([]string, len(keep))
			for k, j := range keep {
				rs[i][k] = r[j]
			}
		}
		return cs, rs
	}
	cs, rs := pick()
	if width <= 0 {
		return keep, rs
	}
	// A column with nothing to say in any row ("-", or no errors) goes
	// before any that has something.
	rank := make([]int, len(cols))
	for j, c := range cols {
		rank[j] = c.drop
		if c.drop > 0 && !slices.ContainsFunc(rows, func(r []string) bool { return r[j] != none && r[j] != "0" }) {
			rank[j] += len(cols) * 100
		}
	}
	for gridWidth(cs, rs) > width {
		drop := -1
		for k, j := range keep {
			if rank[j] > 0 && (drop < 0 || rank[j] > rank[keep[drop]]) {
				drop = k
			}
		}
		if drop < 0 {
			break
		}
		keep = slices.Delete(keep, drop, drop+1)
		cs, rs = pick()
	}
	// Fold the widest foldable column a little at a time, so that the
	// spare width goes to whichever column needs it most.
	for over := gridWidth(cs, rs) - width; over > 0; over = gridWidth(cs, rs) - width {
		widest, at := 0, -1
		for k, c := range cs {
			if !c.fold {
				continue
			}
			w := columnWidth(cs, rs, k)
			if w > minFold && w > widest {
				widest, at = w, k
			}
		}
		if at < 0 {
			break
		}
		target := max(minFold, widest-over)
		for i := range rs {
			rs[i][at] = fold(rs[i][at], target)
		}
		if columnWidth(cs, rs, at) >= widest { // words too long to fold
			cs[at].fold = false
		}
	}
	return keep, rs
}

// columnWidth is the widest cell of column k, its header included.
func columnWidth(cols []column, rows [][]string, k int) int {
	w := textWidth(cols[k].header())
	for _, r := range rows {
		w = max(w, textWidth(r[k]))
	}
	return w
}

// fold breaks text between words into lines at most width wide. A word
// wider than width is broken inside it, so folding always narrows.
func fold(text string, width int) string {
	var lines []string
	for para := range strings.SplitSeq(text, "\n") {
		lines = append(lines, wrapWords(para, width, "", "")...)
	}
	return strings.Join(lines, "\n")
}

// wrapWords breaks text into lines at most width wide, the first starting
// with first and the others with rest (a hanging indent). A word wider
// than the room left on an empty line is cut where the room ends.
func wrapWords(text string, width int, first, rest string) []string {
	var lines []string
	line, indent := first, first
	for _, word := range strings.Fields(text) {
		for {
			room := width - narrow.String(line)
			if line != indent {
				room-- // the space before the word
			}
			if narrow.String(word) <= room {
				if line != indent {
					line += " "
				}
				line += word
				break
			}
			if line != indent { // start a new line and try again
				lines = append(lines, line)
				line, indent = rest, rest
				continue
			}
			// A word wider than a whole line: cut it.
			head := narrow.TruncateString(word, max(1, width-narrow.String(line)), "")
			if head == "" {
				_, size := utf8.DecodeRuneInString(word)
				head = word[:size]
			}
			lines = append(lines, line+head)
			word = word[len(head):]
			line, indent = rest, rest
			if word == "" {
				break
			}
		}
	}
	if line != indent || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// wrapLine fits one line of prose in width columns, continuing it on
// lines indented by two spaces; a width of 0 leaves it whole.
func wrapLine(line string, width int) string {
	if width <= 0 || narrow.String(line) <= width {
		return line
	}
	// Keep the line's own leading spaces on its first line.
	lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
	return strings.Join(wrapWords(line, width, lead, lead+"  "), "\n")
}

// fitTo makes the summary's table at most width columns wide (0: as wide
// as its cells), saying under the table what a column left out said and
// nothing else does: each target's guarantee, and where a history check
// found an impossible order.
func (s *summary) fitTo(width int) {
	keep, rows := fitColumns(s.cols, s.rows, width)
	dropped := func(c column) bool {
		return slices.IndexFunc(keep, func(j int) bool { return s.cols[j].title == c.title }) < 0 &&
			slices.ContainsFunc(s.cols, func(d column) bool { return d.title == c.title })
	}
	var said []string
	if dropped(guaranteeColumn) {
		said = append(said, s.guarantees...)
	}
	if dropped(historyColumn) {
		for _, h := range s.histories {
			if h != "" {
				said = append(said, h)
			}
		}
	}
	s.lines = append(said, s.lines...)
	cols := make([]column, len(keep))
	for k, j := range keep {
		cols[k] = s.cols[j]
	}
	s.cols, s.rows = cols, rows
}

// WrapWords breaks text between words into lines at most width display
// columns wide, continuing on lines that start with indent: for help
// texts and lists that must fit a terminal as tables do.
func WrapWords(text string, width int, indent string) []string {
	return wrapWords(text, width, "", indent)
}

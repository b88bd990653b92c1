package result

import (
	"fmt"
	"math"
)

// How reports write numbers, shared by the terminal summaries and the HTML page so
// both say the same thing.

// FormatMS writes a latency in ms with three significant digits ("0.0865", "12.3",
// "1234").
func FormatMS(v float64) string {
	if math.Abs(v) >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// FormatMiB writes bytes as MiB with one decimal.
func FormatMiB(bytes int64) string { return fmt.Sprintf("%.1f", float64(bytes)/(1<<20)) }

// FormatPerSecond writes a throughput.
func FormatPerSecond(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// FormatTimes writes a speedup: "3.2×", or "0.0054×" for a slower target.
func FormatTimes(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f×", v)
	}
	return fmt.Sprintf("%.2g×", v)
}

// Plural counts: "1 cell", "3 cells".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// NameOr is s, or "unknown" when it is empty.
func NameOr(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

package plan

import "strconv"

// Plural counts n of noun for a message: "1 model", "2 models".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

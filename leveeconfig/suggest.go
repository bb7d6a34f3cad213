package leveeconfig

// suggest returns the candidate closest to written, compared as Spring's relaxed binding
// compares keys, when it is at most two edits away (a typo, as slidingWindowSzie); else "".
func suggest(written string, candidates []string) string {
	w := norm(written)
	best, bestD := "", 3
	for _, c := range candidates {
		if d := levenshtein(w, norm(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// didYouMean is suggest's answer as the end of a message: "; did you mean maxAttempts?".
func didYouMean(written string, candidates []string) string {
	if s := suggest(written, candidates); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

// levenshtein is the number of single-byte insertions, deletions and substitutions that turn
// a into b.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Package plural writes a count with its noun, "1 session" and "2
// sessions", for messages a person or an agent reads: "%d sessions" said
// "1 sessions".
//
// Contract: [Noun] is noun when n is 1 and noun with an s added otherwise
// (0 included: "0 cells"), so it takes regular nouns only; a noun of
// several words gets its s at the end ("earlier chunk", "earlier
// chunks"). [Of] is n, a space and Noun's word. It imports no other
// evalhost package.
package plural

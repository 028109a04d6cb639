// Package jsonscan reads the members of a JSON object, or the elements of
// an array, in the one pass that also checks the text, where gjson checks
// it (Valid) and then parses it again (ForEach): a warm cell's request
// line and its interpreter's three frame lines were each scanned twice or
// more, about a tenth of serve's own CPU per cell.
//
// Object and Array accept what gjson.Valid accepts, no more and no less,
// and give each member and element as gjson.Result values equal to those
// gjson's ForEach gives (their Index aside), so a caller can move to them
// without changing what it accepts or reads. A fuzz target holds both to
// gjson.
package jsonscan

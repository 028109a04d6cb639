// Package heappeak measures how far this process's Go heap rises while
// something runs. Start collects garbage and reads the heap in use as the
// base, then samples it every 20 ms in a goroutine of its own, and whenever
// Sample is called; Stop ends and waits for that goroutine and returns the
// peak growth over the base, in bytes. Sampling can miss a spike shorter
// than the interval: it bounds memory, it does not profile it.
//
// RSSPeak is the process's resident-set high-water mark, which
// ResetRSSPeak lowers to the resident set now (Linux: VmHWM and
// /proc/self/clear_refs); elsewhere both report false.
package heappeak

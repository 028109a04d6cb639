// Package heappeak measures how far this process's Go heap rises while
// something runs. Start collects garbage and reads the heap in use as the
// base, then samples it every 20 ms in a goroutine of its own; Stop ends and
// waits for that goroutine and returns the peak growth over the base, in
// bytes. Sampling can miss a spike shorter than the interval: it bounds
// memory, it does not profile it.
package heappeak

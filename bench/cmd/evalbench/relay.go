package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// The relay floor: the least a relay between a client and an interpreter
// loop costs, for serve's round trip to be read against, as serve is such
// a relay (client ↔ serve ↔ runner) and the one-hop floor is not.
// `evalbench relay-floor -python P` runs floor.py under P and, for each
// line read from its stdin, writes the line to floor.py, reads one reply
// line and writes it to its stdout: one goroutine, blocking reads and
// writes, no parsing.
const relayCmd = "relay-floor"

// relayArgs are this program's arguments that make it the relay floor.
func relayArgs(python string) []string { return []string{relayCmd, "-python", python} }

// relayMain runs the relay floor when args (os.Args[1:]) name it, until
// its stdin ends; ran is false, and nothing done, when they do not.
func relayMain(args []string) (ran bool, err error) {
	if len(args) == 0 || args[0] != relayCmd {
		return false, nil
	}
	fs := flag.NewFlagSet(relayCmd, flag.ContinueOnError)
	python := fs.String("python", "python3", "interpreter that runs floor.py")
	if err := fs.Parse(args[1:]); err != nil {
		return true, err
	}
	if fs.NArg() != 0 {
		return true, fmt.Errorf("%s: unexpected arguments %q (it takes only -python)", relayCmd, fs.Args())
	}
	return true, relayThrough(*python, os.Stdin, os.Stdout, relayLines)
}

// relayFunc carries lines from in to the loop (to) and the loop's replies
// (from) to out, until in ends.
type relayFunc func(in *bufio.Reader, out, to io.Writer, from *bufio.Reader) error

// relayThrough runs floor.py under python and relay between it and in/out.
func relayThrough(python string, in io.Reader, out io.Writer, relay relayFunc) error {
	toR, toW, err := os.Pipe()
	if err != nil {
		return err
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		toR.Close()
		toW.Close()
		return err
	}
	// Fd puts our ends in blocking mode: each read and write is one system
	// call on this goroutine, not a wait in Go's poller.
	toW.Fd()
	fromR.Fd()
	cmd := exec.Command(python, "-c", floorCode)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = toR, fromW, os.Stderr
	err = cmd.Start()
	toR.Close()
	fromW.Close()
	if err != nil {
		toW.Close()
		fromR.Close()
		return fmt.Errorf("relay floor: start floor.py: %w", err)
	}
	rerr := relay(bufio.NewReader(in), out, toW, bufio.NewReader(fromR))
	toW.Close() // floor.py ends at the end of its input
	werr := cmd.Wait()
	fromR.Close()
	if werr != nil {
		werr = fmt.Errorf("relay floor: floor.py: %w", werr)
	}
	return errors.Join(rerr, werr)
}

// relayLines is the relay: a request line in, one reply line out.
func relayLines(in *bufio.Reader, out, to io.Writer, from *bufio.Reader) error {
	for {
		line, err := in.ReadBytes('\n')
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("relay floor: read a request: %w (a partial line %q)", err, line)
		}
		if _, err := to.Write(line); err != nil {
			return fmt.Errorf("relay floor: write to floor.py: %w", err)
		}
		rep, err := from.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("relay floor: read floor.py's reply: %w", err)
		}
		if _, err := out.Write(rep); err != nil {
			return fmt.Errorf("relay floor: write a reply: %w", err)
		}
	}
}

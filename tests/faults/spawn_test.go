package faults

// Cells that start a process of every kind that can outlive its parent, then
// print "pid N" (the interpreter) and "pids A B C D E" (what they started).

// spawnPy starts a Popen sleep, a setsid one, a nohup one, one left behind
// by a shell that exited (double fork), and one double-forked from the
// interpreter itself into a new session.
const spawnPy = `import os, subprocess
print('pid', os.getpid(), flush=True)
_pids = [subprocess.Popen(['sleep', '1000']).pid,
         subprocess.Popen(['sleep', '1001'], start_new_session=True).pid,
         subprocess.Popen(['nohup', 'sleep', '1002'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid,
         int(subprocess.run(['sh', '-c', 'sleep 1003 >/dev/null 2>&1 & echo $!'], capture_output=True, text=True).stdout)]
_r, _w = os.pipe()
_mid = os.fork()
if _mid == 0:
    os.setsid()
    _leaf = os.fork()
    if _leaf == 0:
        os.execvp('sleep', ['sleep', '1004'])
    os.write(_w, b'%d' % _leaf)
    os._exit(0)
os.waitpid(_mid, 0)
os.close(_w)
_pids.append(int(os.read(_r, 32)))
os.close(_r)
print('pids', *_pids, flush=True)
`

// spawnSh starts the same kinds from bash: a background job, a setsid one,
// a nohup one, one left by a shell that exited, and one left by a shell
// that exited in a new session.
const spawnSh = `echo pid $$
sleep 1000 & a=$!
setsid sleep 1001 >/dev/null 2>&1 & b=$!
nohup sleep 1002 >/dev/null 2>&1 & c=$!
d=$(sh -c 'sleep 1003 >/dev/null 2>&1 & echo $!')
e=$(setsid sh -c 'sleep 1004 >/dev/null 2>&1 & echo $!')
echo pids $a $b $c $d $e
`

// spawnCode is the cell for lang ("py" or "sh"); busy keeps it running.
func spawnCode(lang string, busy bool) string {
	if lang == "sh" {
		if busy {
			return spawnSh + "sleep 600\n"
		}
		return spawnSh
	}
	if busy {
		return spawnPy + "import time\ntime.sleep(600)\n"
	}
	return spawnPy
}

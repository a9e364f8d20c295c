package recycle

import (
	"sync"
	"testing"
)

// TestList: what is given back is taken again, each object once, also
// with givers and takers on several goroutines at once.
func TestList(t *testing.T) {
	var l List[int]
	if l.Get() != nil {
		t.Fatal("an empty list gave an object")
	}
	a, b := new(int), new(int)
	l.Put(a)
	l.Put(b)
	got := map[*int]bool{l.Get(): true, l.Get(): true}
	if !got[a] || !got[b] || l.Get() != nil {
		t.Fatalf("took %v, want a and b once each, then nothing", got)
	}

	const objects, rounds = 64, 2000
	for range objects {
		l.Put(new(int))
	}
	var mu sync.Mutex
	held := map[*int]bool{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				x := l.Get()
				if x == nil {
					continue
				}
				mu.Lock()
				if held[x] {
					t.Error("an object was taken twice without being given back")
				}
				held[x] = true
				mu.Unlock()
				*x++
				mu.Lock()
				delete(held, x)
				mu.Unlock()
				go l.Put(x)
			}
		}()
	}
	wg.Wait()
}

func BenchmarkListAcrossGoroutines(b *testing.B) {
	var l List[[64]byte]
	ch := make(chan *[64]byte, 1024)
	done := make(chan struct{})
	go func() {
		for x := range ch {
			l.Put(x)
		}
		close(done)
	}()
	for range b.N {
		x := l.Get()
		if x == nil {
			x = new([64]byte)
		}
		ch <- x
	}
	close(ch)
	<-done
}

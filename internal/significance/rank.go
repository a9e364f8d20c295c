package significance

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// rankSum is the distribution of the Mann-Whitney statistic U (the pairs
// where b is below a) when the n values of A and the m of B are
// exchangeable and untied: each of the C(n+m, n) orders of the pooled
// values equally likely.
type rankSum struct {
	// cum[u] = P(U <= u), u = 0 .. n*m.
	cum []float64
}

// newRankSum counts, for every u, the orders of n a's and m b's with U = u,
// by the largest value: an a above all m b's adds m, a b adds nothing, so
// f(n, m, u) = f(n-1, m, u-m) + f(n, m-1, u) (Mann and Whitney 1947).
// The counts are kept as fractions of the orders, so large sets do not
// overflow. TestRankSumCountsEveryOrder checks them against gonum's
// enumeration of the orders.
func newRankSum(n, m int) rankSum {
	// row[j] is the distribution for (i, j), i the row being built.
	prev := make([][]float64, m+1)
	for j := range prev {
		prev[j] = []float64{1} // i = 0: U = 0 whatever j
	}
	for i := 1; i <= n; i++ {
		cur := make([][]float64, m+1)
		cur[0] = []float64{1} // j = 0: U = 0
		for j := 1; j <= m; j++ {
			// The largest is an a with probability i/(i+j).
			pa, pb := float64(i)/float64(i+j), float64(j)/float64(i+j)
			f := make([]float64, i*j+1)
			for u, p := range prev[j] { // (i-1, j), shifted by j
				f[u+j] += pa * p
			}
			for u, p := range cur[j-1] { // (i, j-1)
				f[u] += pb * p
			}
			cur[j] = f
		}
		prev = cur
	}
	dist := prev[m]
	cum := make([]float64, len(dist))
	s := 0.0
	for u, p := range dist {
		s += p
		cum[u] = math.Min(s, 1)
	}
	return rankSum{cum: cum}
}

// cdf is P(U <= u); 0 below 0, 1 at and beyond n*m.
func (r rankSum) cdf(u int) float64 {
	switch {
	case u < 0:
		return 0
	case u >= len(r.cum)-1:
		return 1
	}
	return r.cum[u]
}

// tolerance absorbs the rounding of (1 - level) / 2: 3 repeats against 3
// reach 90 % exactly (P(U = 0) = 1/20), and 0.1/2 is a hair below 0.05 in
// floating point.
const tolerance = 1e-12

// criticalCount is the largest k with P(U < k) <= alpha: the interval
// between the k-th smallest and the k-th largest pairwise shift then
// covers the true shift with probability at least 1 - 2 alpha. 0 when not
// even P(U = 0) is as small as alpha.
func (r rankSum) criticalCount(alpha float64) int {
	k := 0
	for k < len(r.cum)/2 && r.cdf(k) <= alpha+tolerance {
		k++
	}
	return k
}

// twoSided is the p-value of an observed U (a half-integer when ties were
// counted half): twice the smaller tail, at most 1.
func (r rankSum) twoSided(u float64) float64 {
	below := r.cdf(int(math.Floor(u)))
	above := 1 - r.cdf(int(math.Ceil(u))-1)
	return math.Min(1, 2*math.Min(below, above))
}

// medianOrderStatistic is the largest k with P(B < k) <= alpha for B
// binomial(n, 1/2): the k-th smallest and k-th largest of n values then
// bound their distribution's median with probability at least 1 - 2 alpha.
// 0 when n is too small for alpha.
func medianOrderStatistic(n int, alpha float64) int {
	k := 0
	for k < (n+1)/2 && binomialHalfCDF(n, k) <= alpha+tolerance {
		k++
	}
	return k
}

// binomialHalfCDF is P(B <= k) for B binomial(n, 1/2).
func binomialHalfCDF(n, k int) float64 {
	if k < 0 {
		return 0
	}
	return distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(k))
}

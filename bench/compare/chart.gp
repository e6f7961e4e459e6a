# chart.gp: tether's round-trip time divided by each peer's, per placement (bench/compare
# --dat). gnuplot -e "data='FILE'; out='PNG'" chart.gp
set terminal pngcairo size 1100,520 font "sans,10"
set output out
set title "Round trip x -> x + 1: tether's median time / the peer's, one run (below 1: tether is faster)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 10
set yrange [0.001:100]
set ylabel "tether / peer (log scale)"
set grid ytics
set xtics rotate by -25 left noenhanced
set key top left
set datafile missing "NaN"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 lc rgb "black"
plot data using 2:xtic(1) title "different CPUs" lc rgb "#1f77b4", \
     '' using 3 title "same CPU" lc rgb "#d62728", \
     '' using 4 title "unpinned" lc rgb "#2ca02c"

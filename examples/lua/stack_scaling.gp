# stack_scaling.gp: gnuplot -e "data='DIR'; out='PNG'" stack_scaling.gp (stack_scaling.lua runs it)
set datafile separator ','
set terminal pngcairo size 1300,520 font ',11'
set output out
set multiplot layout 1,2 title 'Resting stacks, masses 1 (bottom) to ratio (top): plain Gauss-Seidel vs Nesterov momentum'
set grid
set logscale xy
set format y '10^{%L}'
set xlabel 'stack height (boxes)'
set xtics (2, 4, 8, 16, 32, 64)
set xrange [1.7:75]
set key top left
ratios = "1 10 100"

set title 'sweeps to a residual of 1e-6 m/s (capped at 30000)'
set ylabel 'sweeps'
plot for [i=1:3] data.'/stack_scaling.csv' using 1:($2 == word(ratios, i) + 0 ? $3 : NaN) \
         with linespoints lw 2 pt 7 lc i title 'plain, ratio '.word(ratios, i), \
     for [i=1:3] data.'/stack_scaling.csv' using 1:($2 == word(ratios, i) + 0 ? $5 : NaN) \
         with linespoints lw 2 dt 2 pt 6 lc i title 'momentum, ratio '.word(ratios, i)

set title 'largest relative impulse error when the sweeps stop'
set ylabel 'largest |impulse / exact - 1|' noenhanced
plot for [i=1:3] data.'/stack_scaling.csv' using 1:($2 == word(ratios, i) + 0 ? $7 : NaN) \
         with linespoints lw 2 pt 7 lc i title 'plain, ratio '.word(ratios, i), \
     for [i=1:3] data.'/stack_scaling.csv' using 1:($2 == word(ratios, i) + 0 ? $8 : NaN) \
         with linespoints lw 2 dt 2 pt 6 lc i title 'momentum, ratio '.word(ratios, i)
unset multiplot

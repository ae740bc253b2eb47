# stack_paths.gp: gnuplot -e "data='DIR'; out='PNG'" stack_paths.gp (stack_paths.lua runs it)
set datafile separator ','
set terminal pngcairo size 900,560 font ',11'
set output out
set title 'Resting stack of 20 unit boxes: residual per sweep'
set logscale y
set format y '10^{%L}'
set xlabel 'sweep'
set ylabel 'sweep residual (m/s)'
set grid
set key top right
plot data.'/stack_paths.csv' using 1:2 with lines lw 6 lc rgb '#a6cee3' title 'dense Gauss-Seidel (assembled A)', \
     '' using 1:3 with lines lw 2 dt 2 lc rgb '#1f78b4' title 'matrix-free sweep (on top of it)', \
     '' using 1:4 with lines lw 2 lc rgb '#e31a1c' title 'matrix-free sweep + Nesterov momentum'

# Turns the CSVs of convergence_data into the tutorials' PNGs: gnuplot -e "data='DIR'" figures.gp
set datafile separator ','
set terminal pngcairo size 800,500 font ',11'
set key top right
set grid

set output 'relaxation_residuals.png'
set title 'Relaxation by cfm: 10-box stack, residual per sweep'
set logscale y
set xlabel 'sweep'
set ylabel 'sweep residual (m/s)'
set format y '10^{%L}'
plot data.'/cfm_residuals.csv' using 1:2 with lines lw 2 title 'cfm = 0', \
     '' using 1:3 with lines lw 2 title 'cfm = J.Y/4', \
     '' using 1:4 with lines lw 2 title 'cfm = J.Y', \
     '' using 1:5 with lines lw 2 title 'cfm = 4 J.Y'

set output 'cfm_vs_regularization.png'
set title 'One row alone: cfm leaves the answer, regularization c moves it'
unset logscale y
set format y '%g'
set xlabel 'cfm or c'
set ylabel 'converged impulse'
set key top right
plot data.'/single_row.csv' using 1:2 with linespoints lw 2 pt 7 title 'lambda with cfm = x', \
     '' using 1:3 with points pt 6 ps 1.5 title 'lambda with c = x', \
     '' using 1:4 with lines lw 1 dt 2 title '-(J.v + b)/(J.Y + c)'

set output 'settling_depth.png'
set title 'Resting box under Baumgarte bias (beta = 0.2): depth settles at c m g dt^2 / beta'
set xlabel 'step'
set ylabel 'penetration depth (m)'
set key bottom right
plot data.'/settling.csv' using 1:2 with lines lw 2 title 'c = 0', \
     '' using 1:3 with lines lw 2 title 'c = 0.05', \
     '' using 1:4 with lines lw 2 title 'c = 0.2', \
     '' using 1:5 with lines lw 2 title 'c = 0.5', \
     '' using 1:6 with lines dt 2 lc 'gray' notitle, \
     '' using 1:7 with lines dt 2 lc 'gray' notitle, \
     '' using 1:8 with lines dt 2 lc 'gray' title 'predicted'

set output 'momentum_stacks.png'
set title 'Plain Gauss-Seidel vs Nesterov momentum on tall stacks'
set logscale y
set format y '10^{%L}'
set xlabel 'sweep'
set ylabel 'residual / first residual'
set key top right
plot data.'/momentum_h20_r1.csv' using 1:2 with lines lw 2 lc 1 title 'height 20, ratio 1: plain', \
     '' using 1:3 with lines lw 2 lc 1 dt 2 title '... momentum', \
     data.'/momentum_h20_r100.csv' using 1:2 with lines lw 2 lc 2 title 'height 20, ratio 100: plain', \
     '' using 1:3 with lines lw 2 lc 2 dt 2 title '... momentum', \
     data.'/momentum_h50_r10.csv' using 1:2 with lines lw 2 lc 3 title 'height 50, ratio 10: plain', \
     '' using 1:3 with lines lw 2 lc 3 dt 2 title '... momentum'

set output 'momentum_restarts.png'
set title 'Where restarts fire: height-20 stack with momentum'
set xrange [0:400]
plot data.'/momentum_h20_r1.csv' using 1:3 with lines lw 2 title 'momentum', \
     data.'/momentum_restarts_h20_r1.csv' using 1:2 with points pt 7 ps 1 lc 'red' title 'restart'
unset xrange

set output 'load_reaching_ground.png'
set title 'Plain sweeps: the load reaches the ground slowly (height 20)'
unset logscale y
set format y '%g'
set xlabel 'sweep'
set ylabel 'impulse / exact impulse'
set logscale x
set key bottom right
plot data.'/load_h20.csv' using 1:4 with lines lw 2 title 'top contact', \
     '' using 1:3 with lines lw 2 title 'middle contact', \
     '' using 1:2 with lines lw 2 title 'bottom contact'

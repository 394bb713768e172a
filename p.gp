# lieflow plot script (gnuplot >= 5). Re-render with: gnuplot <this file>
# Data and image are found next to this script, whatever the working directory.
if (!exists("ARG0")) ARG0 = ""
scriptdir = ARG0; i = strlen(scriptdir)
while (i > 0 && scriptdir[i:i] ne "/") { i = i - 1 }
scriptdir = (i > 0) ? scriptdir[1:i] : "./"
datafile = scriptdir.'p.dat'
set terminal pngcairo enhanced size 900,600 font 'Sans,12' linewidth 1
set output scriptdir.(exists("lf_tmp") ? lf_tmp : 'p.png')
set encoding utf8
set logscale y 10
set ytics ('9×10^{-6}' 9.0000000000000002e-06, '10^{-5}' 1.0000000000000001e-05)
set mytics default
set yrange [9.0000000000000002e-06:1.0764745742161773e-05]
set grid xtics ytics lt 1 lw 1 lc rgb '#dcdcdc'
set datafile commentschars '#'
set key off
plot datafile using 1:2 with linespoints lw 2 pt 7 ps 0.9 notitle
unset output

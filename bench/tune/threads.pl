# Worker threads that come and go: 8 waves of 8 threads, each building and dropping a hash of
# strings; what a thread frees stays in the arena it allocated from.
use strict; use warnings; use threads;
my @keep;
for my $wave (1..8) {
  my @t = map { my $id = $_; threads->create(sub {
      my %h; my $n = 0;
      for my $i (1..40000) { $h{"k$i-$id"} = "v" x (20 + ($i * 7919 + $id) % 300); }
      for my $i (1..40000) { delete $h{"k$i-$id"} if $i % 3; }
      $n += length($_) for values %h;
      return $n; }) } 1..8;
  my $sum = 0; $sum += $_->join for @t;
  push @keep, $sum;
}
print scalar(@keep), "\n";

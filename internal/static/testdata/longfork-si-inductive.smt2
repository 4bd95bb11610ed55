; isovet static encoding; model si; transactions [Wr Rd]
(set-logic ALL)
(declare-sort T 0)
(declare-datatypes ((Ty 0)) (((ty.Wr) (ty.Rd))))
(declare-sort R.Kv 0)
(declare-datatypes ((F.Kv 0)) (((Kv.Alive) (Kv.val))))
(declare-fun Kv.k (R.Kv) Int)
(declare-fun alive.Kv (R.Kv T) Bool)
(declare-fun WR.Kv (R.Kv F.Kv T T) Bool)
(declare-fun WW.Kv (R.Kv F.Kv T T) Bool)
(declare-fun RW.Kv (R.Kv F.Kv T T) Bool)
(declare-fun typ (T) Ty)
(declare-fun vis (T T) Bool)
(declare-fun ar (T T) Bool)
(declare-fun WR (T T) Bool)
(declare-fun WW (T T) Bool)
(declare-fun RW (T T) Bool)
(declare-fun Wr.x (T) Int)
(declare-fun Rd.a (T) Int)
(declare-fun Rd.b (T) Int)
(declare-fun Rd.va (T) Int)
(declare-fun Rd.va.null (T) Bool)
(declare-fun Rd.vb (T) Int)
(declare-fun Rd.vb.null (T) Bool)
(define-fun D ((a T) (b T)) Bool (or (= a b) (WR a b) (WW a b) (RW a b)))
; basic: ar is a strict total order, vis ⊆ ar, Lemma 4
(assert (forall ((a T)) (not (ar a a))))
(assert (forall ((a T) (b T) (c T)) (=> (and (ar a b) (ar b c)) (ar a c))))
(assert (forall ((a T) (b T)) (=> (not (= a b)) (or (ar a b) (ar b a)))))
(assert
  (and
    (forall ((a T) (b T)) (=> (vis a b) (ar a b)))
    (forall ((a T) (b T)) (=> (WR a b) (vis a b)))
    (forall ((a T) (b T)) (=> (WW a b) (ar a b)))
    (forall ((a T) (b T)) (=> (RW a b) (not (vis b a))))))
; a dependency between instances is a dependency on some row and field
(assert (forall ((a T) (b T)) (=> (WR a b) (exists ((r R.Kv)) (WR.Kv r Kv.val a b)))))
(assert (forall ((a T) (b T)) (=> (WW a b) (exists ((r R.Kv)) (WW.Kv r Kv.val a b)))))
(assert (forall ((a T) (b T)) (=> (RW a b) (exists ((r R.Kv)) (RW.Kv r Kv.val a b)))))
; table Kv
(declare-fun row.Kv (Int) R.Kv)
(assert (forall ((r R.Kv)) (= (row.Kv (Kv.k r)) r)))
(assert
  (and
    (forall ((r R.Kv) (a T) (b T)) (=> (WR.Kv r Kv.val a b) (WR a b)))
    (forall ((r R.Kv) (a T) (b T)) (=> (WW.Kv r Kv.val a b) (WW a b)))
    (forall ((r R.Kv) (a T) (b T)) (=> (RW.Kv r Kv.val a b) (RW a b)))))
(assert
  (forall ((r R.Kv) (a T) (b T) (c T))
    (!
      (=> (and (WR.Kv r Kv.val b a) (RW.Kv r Kv.val a c)) (WW.Kv r Kv.val b c))
      :pattern
      ((WR.Kv r Kv.val b a) (RW.Kv r Kv.val a c)))))
(assert
  (forall ((r R.Kv) (a T) (b T) (c T))
    (!
      (=> (and (WR.Kv r Kv.val a c) (WR.Kv r Kv.val b c)) (= a b))
      :pattern
      ((WR.Kv r Kv.val a c) (WR.Kv r Kv.val b c)))))
(assert (forall ((r R.Kv) (a T) (b T)) (=> (alive.Kv r a) (alive.Kv r b))))
(assert
  (forall ((r R.Kv) (a T) (b T))
    (!
      (=>
        (WR.Kv r Kv.val a b)
        (or
          (and
            (= (typ a) ty.Wr)
            (= (typ b) ty.Rd)
            (= (Kv.k r) (Wr.x a))
            (alive.Kv r a)
            (= (Kv.k r) (Rd.a b)))
          (and
            (= (typ a) ty.Wr)
            (= (typ b) ty.Rd)
            (= (Kv.k r) (Wr.x a))
            (alive.Kv r a)
            (= (Kv.k r) (Rd.b b)))))
      :pattern
      ((WR.Kv r Kv.val a b)))))
; (necessary conditions for WR on Kv: 2 statement pairs)
(assert
  (forall ((r R.Kv) (a T) (b T))
    (!
      (=>
        (WW.Kv r Kv.val a b)
        (and
          (= (typ a) ty.Wr)
          (= (typ b) ty.Wr)
          (= (Kv.k r) (Wr.x a))
          (alive.Kv r a)
          (= (Kv.k r) (Wr.x b))
          (alive.Kv r b)))
      :pattern
      ((WW.Kv r Kv.val a b)))))
; (necessary conditions for WW on Kv: 1 statement pairs)
(assert
  (forall ((r R.Kv) (a T) (b T))
    (!
      (=>
        (RW.Kv r Kv.val a b)
        (or
          (and
            (= (typ a) ty.Rd)
            (= (typ b) ty.Wr)
            (= (Kv.k r) (Rd.a a))
            (= (Kv.k r) (Wr.x b))
            (alive.Kv r b))
          (and
            (= (typ a) ty.Rd)
            (= (typ b) ty.Wr)
            (= (Kv.k r) (Rd.b a))
            (= (Kv.k r) (Wr.x b))
            (alive.Kv r b))))
      :pattern
      ((RW.Kv r Kv.val a b)))))
; (necessary conditions for RW on Kv: 2 statement pairs)
; forcing: exact writes of one row and field ordered by ar are WW
(assert
  (forall ((r R.Kv) (a T) (b T))
    (=>
      (and
        (= (typ a) ty.Wr)
        (= (typ b) ty.Wr)
        (= (Kv.k r) (Wr.x a))
        (alive.Kv r a)
        (= (Kv.k r) (Wr.x b))
        (alive.Kv r b)
        (not (= a b)))
      (and (=> (ar a b) (WW.Kv r Kv.val a b)) (=> (ar b a) (WW.Kv r Kv.val b a))))))
; variables of Wr
; variables of Rd
(assert
  (forall ((t T))
    (=>
      (and (= (typ t) ty.Rd) (not (Rd.va.null t)))
      (exists ((r1 R.Kv)) (and (= (Kv.k r1) (Rd.a t)) (alive.Kv r1 t))))))
(assert
  (forall ((r1 R.Kv) (t T))
    (=> (and (= (typ t) ty.Rd) (= (Kv.k r1) (Rd.a t)) (alive.Kv r1 t)) (not (Rd.va.null t)))))
(assert
  (forall ((t T))
    (=>
      (and (= (typ t) ty.Rd) (not (Rd.vb.null t)))
      (exists ((r2 R.Kv)) (and (= (Kv.k r2) (Rd.b t)) (alive.Kv r2 t))))))
(assert
  (forall ((r2 R.Kv) (t T))
    (=> (and (= (typ t) ty.Rd) (= (Kv.k r2) (Rd.b t)) (alive.Kv r2 t)) (not (Rd.vb.null t)))))
; consistency model si
(assert (forall ((a T) (b T)) (=> (WW a b) (vis a b))))
(assert (forall ((a T) (b T) (c T)) (=> (and (ar a b) (vis b c)) (vis a c))))
; query inductive-1 Wr
(declare-const q1 T)
(declare-const q2 T)
(assert (and (= (typ q1) ty.Wr) (D q1 q2) (not (= q1 q2)) (not (ar q1 q2))))
(check-sat)

; isovet static encoding; model ser; transactions [withdraw]
(set-logic ALL)
(declare-sort T 0)
(declare-datatypes ((Ty 0)) (((ty.withdraw))))
(declare-sort R.Account 0)
(declare-datatypes ((F.Account 0)) (((Account.Alive) (Account.Balance))))
(declare-fun Account.AccID (R.Account) Int)
(declare-fun alive.Account (R.Account T) Bool)
(declare-fun WR.Account (R.Account F.Account T T) Bool)
(declare-fun WW.Account (R.Account F.Account T T) Bool)
(declare-fun RW.Account (R.Account F.Account T T) Bool)
(declare-fun typ (T) Ty)
(declare-fun vis (T T) Bool)
(declare-fun ar (T T) Bool)
(declare-fun WR (T T) Bool)
(declare-fun WW (T T) Bool)
(declare-fun RW (T T) Bool)
(declare-fun withdraw.ID (T) Int)
(declare-fun withdraw.Amount (T) Int)
(declare-fun withdraw.bal (T) Int)
(declare-fun withdraw.bal.null (T) Bool)
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
(assert
  (forall ((a T) (b T)) (=> (WR a b) (exists ((r R.Account)) (WR.Account r Account.Balance a b)))))
(assert
  (forall ((a T) (b T)) (=> (WW a b) (exists ((r R.Account)) (WW.Account r Account.Balance a b)))))
(assert
  (forall ((a T) (b T)) (=> (RW a b) (exists ((r R.Account)) (RW.Account r Account.Balance a b)))))
; table Account
(declare-fun row.Account (Int) R.Account)
(assert (forall ((r R.Account)) (= (row.Account (Account.AccID r)) r)))
(assert
  (and
    (forall ((r R.Account) (a T) (b T)) (=> (WR.Account r Account.Balance a b) (WR a b)))
    (forall ((r R.Account) (a T) (b T)) (=> (WW.Account r Account.Balance a b) (WW a b)))
    (forall ((r R.Account) (a T) (b T)) (=> (RW.Account r Account.Balance a b) (RW a b)))))
(assert
  (forall ((r R.Account) (a T) (b T) (c T))
    (!
      (=>
        (and (WR.Account r Account.Balance b a) (RW.Account r Account.Balance a c))
        (WW.Account r Account.Balance b c))
      :pattern
      ((WR.Account r Account.Balance b a) (RW.Account r Account.Balance a c)))))
(assert
  (forall ((r R.Account) (a T) (b T) (c T))
    (!
      (=> (and (WR.Account r Account.Balance a c) (WR.Account r Account.Balance b c)) (= a b))
      :pattern
      ((WR.Account r Account.Balance a c) (WR.Account r Account.Balance b c)))))
(assert (forall ((r R.Account) (a T) (b T)) (=> (alive.Account r a) (alive.Account r b))))
(assert
  (forall ((r R.Account) (a T) (b T))
    (!
      (=>
        (WR.Account r Account.Balance a b)
        (and
          (= (typ a) ty.withdraw)
          (= (typ b) ty.withdraw)
          (not (withdraw.bal.null a))
          (> (withdraw.bal a) (withdraw.Amount a))
          (= (Account.AccID r) (withdraw.ID a))
          (alive.Account r a)
          (= (Account.AccID r) (withdraw.ID b))))
      :pattern
      ((WR.Account r Account.Balance a b)))))
; (necessary conditions for WR on Account: 1 statement pairs)
(assert
  (forall ((r R.Account) (a T) (b T))
    (!
      (=>
        (WW.Account r Account.Balance a b)
        (and
          (= (typ a) ty.withdraw)
          (= (typ b) ty.withdraw)
          (not (withdraw.bal.null a))
          (> (withdraw.bal a) (withdraw.Amount a))
          (= (Account.AccID r) (withdraw.ID a))
          (alive.Account r a)
          (not (withdraw.bal.null b))
          (> (withdraw.bal b) (withdraw.Amount b))
          (= (Account.AccID r) (withdraw.ID b))
          (alive.Account r b)))
      :pattern
      ((WW.Account r Account.Balance a b)))))
; (necessary conditions for WW on Account: 1 statement pairs)
(assert
  (forall ((r R.Account) (a T) (b T))
    (!
      (=>
        (RW.Account r Account.Balance a b)
        (and
          (= (typ a) ty.withdraw)
          (= (typ b) ty.withdraw)
          (= (Account.AccID r) (withdraw.ID a))
          (not (withdraw.bal.null b))
          (> (withdraw.bal b) (withdraw.Amount b))
          (= (Account.AccID r) (withdraw.ID b))
          (alive.Account r b)))
      :pattern
      ((RW.Account r Account.Balance a b)))))
; (necessary conditions for RW on Account: 1 statement pairs)
; forcing: exact writes of one row and field ordered by ar are WW
(assert
  (forall ((r R.Account) (a T) (b T))
    (=>
      (and
        (= (typ a) ty.withdraw)
        (= (typ b) ty.withdraw)
        (not (withdraw.bal.null a))
        (> (withdraw.bal a) (withdraw.Amount a))
        (= (Account.AccID r) (withdraw.ID a))
        (alive.Account r a)
        (not (withdraw.bal.null b))
        (> (withdraw.bal b) (withdraw.Amount b))
        (= (Account.AccID r) (withdraw.ID b))
        (alive.Account r b)
        (not (= a b)))
      (and
        (=> (ar a b) (WW.Account r Account.Balance a b))
        (=> (ar b a) (WW.Account r Account.Balance b a))))))
; variables of withdraw
(assert
  (forall ((t T))
    (=>
      (and (= (typ t) ty.withdraw) (not (withdraw.bal.null t)))
      (exists ((r1 R.Account)) (and (= (Account.AccID r1) (withdraw.ID t)) (alive.Account r1 t))))))
(assert
  (forall ((r1 R.Account) (t T))
    (=>
      (and (= (typ t) ty.withdraw) (= (Account.AccID r1) (withdraw.ID t)) (alive.Account r1 t))
      (not (withdraw.bal.null t)))))
; consistency model ser
(assert (forall ((a T) (b T)) (= (vis a b) (ar a b))))
; query shortest-path k=3
(declare-const p1 T)
(declare-const p2 T)
(declare-const p3 T)
(declare-const p4 T)
(assert
  (and
    (D p1 p2)
    (D p2 p3)
    (D p3 p4)
    (not (D p1 p3))
    (not (D p1 p4))
    (not (D p2 p4))
    (distinct p1 p2 p3 p4)))
(check-sat)

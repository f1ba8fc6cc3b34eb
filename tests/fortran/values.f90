! What the Fortran and C test programs put and check: the value at 0-based
! global indices, one formula per rank (each index below 100), the same as
! values.h's; and checks that print and count every mismatch.
module values
  use, intrinsic :: iso_fortran_env, only: int64, error_unit
  use cove, only: cove_last_error, cove_status_name
  implicit none
  private
  public :: v2, v3, v4, expect, expect_status, failures

  integer :: failures = 0

contains

  pure integer(int64) function v2(i, j)
    integer, intent(in) :: i, j

    v2 = 100_int64 * i + j
  end function

  pure integer(int64) function v3(i, j, k)
    integer, intent(in) :: i, j, k

    v3 = 10000_int64 * i + 100_int64 * j + k
  end function

  pure integer(int64) function v4(i, j, k, l)
    integer, intent(in) :: i, j, k, l

    v4 = 1000000_int64 * i + 10000_int64 * j + 100_int64 * k + l
  end function

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what

    if (ok) return
    failures = failures + 1
    write (error_unit, '(a)') "check failed: "//what
  end subroutine

  ! The status must be `code`; for errors, with a message that says `words`.
  subroutine expect_status(status, code, what, words)
    integer, intent(in) :: status, code
    character(*), intent(in) :: what
    character(*), intent(in), optional :: words
    character(:), allocatable :: message

    message = cove_last_error()
    if (status /= code) then
      failures = failures + 1
      write (error_unit, '(a)') "check failed: "//what//": status "//cove_status_name(status)//", expected "// &
        cove_status_name(code)//" ("//message//")"
      return
    end if
    if (code /= 0 .and. len(message) == 0) call expect(.false., what//": no message with the error")
    if (present(words)) then
      if (index(message, words) == 0) call expect(.false., what//": message '"//message//"' lacks '"//words//"'")
    end if
  end subroutine
end module values
